// Package proprietary is a license fixture.
package proprietary

// Name names the fixture.
const Name = "proprietary"
