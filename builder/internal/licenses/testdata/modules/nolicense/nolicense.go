// Package nolicense is a license fixture.
package nolicense

// Name names the fixture.
const Name = "nolicense"
