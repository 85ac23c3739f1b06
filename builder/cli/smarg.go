package cli

import (
	"github.com/jetbake/jetbake/computecap"
)

// parseSM reads a compute capability a user gave as name (a flag such as
// "--gpu", or an argument such as "RUNTIME") and refuses, as bad input, one
// that does not parse or that the table of Jetson facts does not know: a
// sentence that names the value, the SMs jetbake knows and what to do.
// example is how the command takes an SM, such as "--gpu 8.6".
func parseSM(tab *computecap.Table, name, value, example string) (computecap.Capability, error) {
	c, err := computecap.Parse(value)
	if err != nil {
		return computecap.Capability{}, usageErrorf("%s: %w", name, err)
	}
	if tab.Knows(c) {
		return c, nil
	}
	jetson, other := tab.KnownSMs()
	fix := "give one of these"
	if other != "" {
		fix += " (a desktop or server GPU by its own SM, such as " + example + ")"
		jetson += "; desktop and server GPUs " + other
	}
	return computecap.Capability{}, usageErrorf("%s %s: jetbake knows no GPU with SM %s; it knows %s: %s, or install a newer jetbake, which may know SM %s",
		name, computecap.QuoteShort(value), c, jetson, fix, c)
}
