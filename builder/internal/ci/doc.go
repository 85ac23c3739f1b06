// Package ci has no code: its test checks the composite action (action.yml)
// and the example GitHub Actions workflow (examples/github-actions) with
// actionlint, as GitHub would read them.
package ci
