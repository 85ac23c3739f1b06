// Package vendored is a copy of other code, under its own license.
package vendored

// Name names the fixture.
const Name = "vendored"
