// Package computecap holds the shared rules of jetbake about CUDA compute
// capabilities: how they are written, which binary runs on which GPU, which
// CUDA toolkit can build which SM, and the host rule of each JetPack flavour.
// Every Jetson fact is a row of one table (Table; the shipped rows are in
// facts.go): SoCs, JetPack releases and toolchains. Package-level functions
// read the shipped table; Table's methods read any table, such as one with a
// future Jetson added.
//
// The package uses the standard library only and no fmt, reflection or
// regexp, because the image's static entrypoint imports it and must stay
// small.
package computecap

import (
	"strconv"
	"strings"
)

// Capability is a CUDA compute capability such as 8.7, or an arch-specific
// one such as 9.0a. The zero value means "unknown" and is not valid.
type Capability struct {
	// Major is the major version, 1 to 99.
	Major int
	// Minor is the minor version, 0 to 9.
	Minor int
	// ArchSpecific marks an arch-specific target such as sm_90a, whose code
	// runs only on the exact SM it was built for.
	ArchSpecific bool
}

// ParseError reports a compute capability that Parse does not accept.
type ParseError struct {
	// Input is the text given to Parse, untrimmed.
	Input string
}

// Error quotes the input and lists the accepted forms.
func (e *ParseError) Error() string {
	return "compute capability " + QuoteShort(e.Input) +
		" is not valid: want forms like 8.7, 87, sm_87 or compute_87"
}

// Parse reads a compute capability in one of the forms "8.7", "87",
// "sm_87", "compute_87", "11.0", "110", "sm_110", with an optional "a"
// suffix for arch-specific targets ("9.0a", "90a", "sm_90a"). Spaces around
// the text are ignored. In the undotted forms the last digit is the minor
// version ("101" is 10.1). The major version must be 1 to 99 without a
// leading zero, and the minor version one digit. Anything else returns a
// *ParseError that quotes the input.
func Parse(s string) (Capability, error) {
	c, ok := parse(strings.TrimSpace(s))
	if !ok {
		return Capability{}, &ParseError{Input: s}
	}
	return c, nil
}

// MustParse is Parse for constants in code and tests: it panics when s is
// not valid. Never use it on outside input.
func MustParse(s string) Capability {
	c, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return c
}

func parse(s string) (Capability, bool) {
	var c Capability
	if rest, ok := strings.CutSuffix(s, "a"); ok {
		c.ArchSpecific = true
		s = rest
	}
	prefixed := false
	if rest, ok := strings.CutPrefix(s, "sm_"); ok {
		s, prefixed = rest, true
	} else if rest, ok := strings.CutPrefix(s, "compute_"); ok {
		s, prefixed = rest, true
	}
	var majorText, minorText string
	if i := strings.IndexByte(s, '.'); i >= 0 {
		if prefixed {
			return Capability{}, false
		}
		majorText, minorText = s[:i], s[i+1:]
	} else {
		if len(s) < 2 {
			return Capability{}, false
		}
		majorText, minorText = s[:len(s)-1], s[len(s)-1:]
	}
	if len(majorText) < 1 || len(majorText) > 2 || majorText[0] == '0' || !allDigits(majorText) {
		return Capability{}, false
	}
	if len(minorText) != 1 || !allDigits(minorText) {
		return Capability{}, false
	}
	c.Major, _ = strconv.Atoi(majorText)
	c.Minor = int(minorText[0] - '0')
	return c, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Valid reports whether c is a capability that Parse could return: major 1
// to 99 and minor 0 to 9.
func (c Capability) Valid() bool {
	return c.Major >= 1 && c.Major <= 99 && c.Minor >= 0 && c.Minor <= 9
}

// IsZero reports whether c is the zero value, so that the `omitzero` JSON
// option leaves unset capabilities out.
func (c Capability) IsZero() bool {
	return c == Capability{}
}

func (c Capability) suffix() string {
	if c.ArchSpecific {
		return "a"
	}
	return ""
}

// String writes c in dotted form: "8.7", "11.0", "9.0a".
func (c Capability) String() string {
	return strconv.Itoa(c.Major) + "." + strconv.Itoa(c.Minor) + c.suffix()
}

// Digits writes c without a dot: "87", "110", "90a". It is the form used in
// binary names such as router-87 and in CUDA_COMPUTE_CAP.
func (c Capability) Digits() string {
	return strconv.Itoa(c.Major) + strconv.Itoa(c.Minor) + c.suffix()
}

// SM writes c as an nvcc real architecture: "sm_87", "sm_110", "sm_90a".
// For the name a given CUDA release uses (Thor is sm_101 before CUDA 13.0),
// see NVCCArch.
func (c Capability) SM() string {
	return "sm_" + c.Digits()
}

// Canonical returns the capability that names the same GPU for binary
// selection: Thor reports 10.1 with the old nvgpu driver and CUDA 12.x and
// 11.0 with OpenRM and CUDA 13, so 10.1 becomes 11.0 (keeping the
// arch-specific flag). Every other capability is returned unchanged. The
// aliases are the SoC rows' (see Table.Canonical).
func (c Capability) Canonical() Capability {
	return defaultTable.Canonical(c)
}

// IsTegra reports whether c belongs to an integrated Tegra GPU of a Jetson
// module of the shipped table: 5.3 (TX1, Nano), 6.2 (TX2), 7.2 (Xavier), 8.7
// (Orin) and 10.1 or 11.0 (Thor). The arch-specific flag is ignored. The
// answer comes from the SoC rows, not from the SM number: see
// Table.IsTegra for another table.
func (c Capability) IsTegra() bool {
	return defaultTable.IsTegra(c)
}

// Less orders capabilities by major, then minor version; a plain target
// sorts before the arch-specific one of the same version (9.0 < 9.0a).
func (c Capability) Less(o Capability) bool {
	if c.Major != o.Major {
		return c.Major < o.Major
	}
	if c.Minor != o.Minor {
		return c.Minor < o.Minor
	}
	return !c.ArchSpecific && o.ArchSpecific
}

// Compare returns -1, 0 or +1 as c sorts before, equal to or after o, in
// the order of Less. It suits slices.SortFunc.
func (c Capability) Compare(o Capability) int {
	switch {
	case c.Less(o):
		return -1
	case o.Less(c):
		return 1
	default:
		return 0
	}
}

// MarshalText writes c as String does, so that JSON holds "8.7". The zero
// value is written as an empty string; any other invalid value is an error.
func (c Capability) MarshalText() ([]byte, error) {
	if c.IsZero() {
		return []byte{}, nil
	}
	if !c.Valid() {
		return nil, &ParseError{Input: c.String()}
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads any form Parse accepts. An empty text gives the zero
// value, matching MarshalText.
func (c *Capability) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*c = Capability{}
		return nil
	}
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
