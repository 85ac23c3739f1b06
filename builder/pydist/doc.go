// Package pydist reads the Python distributions an image holds and
// compares a framework base's with the image built on it.
//
// An NGC PyTorch container's value is its vendor stack: a torch built for
// Tegra, and the packages /etc/pip/constraint.txt pins "to prevent
// unintentional overwriting". An app installed on top can lose it three
// ways: pip replaces torch in the system environment, a venv that sees
// the system's site-packages gets its own torch that its python imports
// first, or a package is uninstalled. Read both file systems with
// ReadImage (an image's layers, whiteouts applied) or ReadDir (a folder),
// then Compare them; each problem is one sentence with the fix.
package pydist
