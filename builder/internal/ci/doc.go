// Package ci checks what GitHub runs; its one function, Lint, runs
// actionlint. Its tests: actionlint reads the composite action
// (action.yml), the example workflow (examples/github-actions), jetbake's
// own CI and release workflows (.github/workflows) and the Jetson gate that
// `jetbake init --gate` writes (with its issue form's shape) as GitHub
// would; `make release` runs in a tagged copy
// of the checkout and its SHA256SUMS is checked; the action's install
// script installs that release from a stand-in of GitHub's release
// downloads and refuses a corrupt or mislabeled one; the action's build and
// signing scripts run with stand-ins of jetbake and cosign; CHANGELOG.md keeps
// Keep a Changelog's form, and the release workflow's notes step is run on it.
package ci
