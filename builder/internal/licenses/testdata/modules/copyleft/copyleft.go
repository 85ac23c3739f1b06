// Package copyleft is a license fixture.
package copyleft

// Name names the fixture.
const Name = "copyleft"
