package computecap

import (
	"strconv"
	"strings"
)

// L4TVersion is a Jetson Linux (L4T) release such as 36.4.7.
type L4TVersion struct {
	// Major, Minor and Patch are the three parts: R36, REVISION 4.7.
	Major, Minor, Patch int
}

// L4TVersionError reports an L4T version that ParseL4TVersion does not accept.
type L4TVersionError struct {
	// Input is the text given to ParseL4TVersion, untrimmed.
	Input string
	// Reason says what is wrong, starting with " has" or ": ".
	Reason string
}

// Error quotes the input and says why it is not an L4T version:
// `L4T version "36.4.x": "x" is not a number of 1 to 4 digits`.
func (e *L4TVersionError) Error() string {
	return "L4T version " + QuoteShort(e.Input) + e.Reason
}

// ParseL4TVersion reads "36", "36.4" or "36.4.3": one to three parts of 1
// to 4 decimal digits, the major not 0. Spaces around the text are ignored.
func ParseL4TVersion(s string) (L4TVersion, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) > 3 {
		return L4TVersion{}, &L4TVersionError{Input: s, Reason: " has more than three parts"}
	}
	var n [3]int
	for i, p := range parts {
		if len(p) == 0 || len(p) > 4 || !allDigits(p) {
			return L4TVersion{}, &L4TVersionError{Input: s, Reason: ": " + strconv.Quote(p) + " is not a number of 1 to 4 digits"}
		}
		n[i], _ = strconv.Atoi(p)
	}
	if n[0] == 0 {
		return L4TVersion{}, &L4TVersionError{Input: s, Reason: " has major 0"}
	}
	return L4TVersion{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

// String writes v as "36.4.7".
func (v L4TVersion) String() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
}

// MajorMinor writes v as "36.4".
func (v L4TVersion) MajorMinor() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

// IsZero reports whether v is the zero value (no version).
func (v L4TVersion) IsZero() bool { return v == L4TVersion{} }

// Less reports whether v is an older release than o.
func (v L4TVersion) Less(o L4TVersion) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}
