package computecap

import (
	"slices"
	"strings"
)

// Knows reports whether the table has a row for the SM of c: a SoC's (or
// one of its aliases, Thor's 10.1) or a toolchain row's. An arch-specific
// suffix is ignored: 9.0a is known when 9.0 is.
func (t *Table) Knows(c Capability) bool {
	if t.IsTegra(c) {
		return true
	}
	for _, row := range t.Toolchain {
		if sameSM(row.SM, c) {
			return true
		}
	}
	return false
}

// KnownSMs lists the SMs the table knows, for a sentence that refuses one
// it does not: jetson is "Jetson 5.3 (Nano/TX1), ..., 11.0 (Thor, also
// 10.1)", other the SMs of the toolchain rows that are no Jetson's ("5.0,
// 5.2, ..."), empty when there is none.
func (t *Table) KnownSMs() (jetson, other string) {
	var js []string
	for _, s := range t.SoCs {
		name := s.Capability.String() + " (" + s.Family
		for _, a := range s.Aliases {
			name += ", also " + a.String()
		}
		js = append(js, name+")")
	}
	var others []Capability
	for _, row := range t.Toolchain {
		c := Capability{Major: row.SM.Major, Minor: row.SM.Minor}
		if !t.IsTegra(c) {
			others = append(others, c)
		}
	}
	slices.SortFunc(others, Capability.Compare)
	others = slices.Compact(others)
	names := make([]string, len(others))
	for i, c := range others {
		names[i] = c.String()
	}
	return "Jetson " + strings.Join(js, ", "), strings.Join(names, ", ")
}

// knownText joins KnownSMs' two lists.
func knownText(jetson, other string) string {
	if other == "" {
		return jetson
	}
	return jetson + "; desktop and server GPUs " + other
}
