// Package permissive is a license fixture.
package permissive

// Name names the fixture.
const Name = "permissive"
