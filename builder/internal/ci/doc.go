// Package ci has no code: its tests check what GitHub runs. actionlint
// reads the composite action (action.yml), the example workflow
// (examples/github-actions) and jetbake's own CI and release workflows
// (.github/workflows) as GitHub would; `make release` runs in a tagged copy
// of the checkout and its SHA256SUMS is checked; the action's install
// script installs that release from a stand-in of GitHub's release
// downloads and refuses a corrupt or mislabeled one; the action's build and
// signing scripts run with stand-ins of jetbake and cosign; CHANGELOG.md keeps
// Keep a Changelog's form, and the release workflow's notes step is run on it.
package ci
