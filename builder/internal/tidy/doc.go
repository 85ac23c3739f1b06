// Package tidy holds repository-wide checks of the code's shape, run as its
// tests: they read the module's source with go/parser rather than build it.
package tidy
