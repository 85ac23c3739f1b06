package computecap

import (
	"slices"
	"strconv"
	"strings"
)

// CUDAVersion is a CUDA toolkit version such as 12.6; the patch level is
// not kept.
type CUDAVersion struct {
	// Major is the major version, such as 12.
	Major int
	// Minor is the minor version, such as 6.
	Minor int
}

// CUDAVersionError reports a CUDA version that ParseCUDAVersion does not
// accept.
type CUDAVersionError struct {
	// Input is the text given to ParseCUDAVersion, untrimmed.
	Input string
}

// Error quotes the input and shows the accepted forms.
func (e *CUDAVersionError) Error() string {
	return "CUDA version " + QuoteShort(e.Input) + " is not valid: want forms like 12.6 or 12.6.11"
}

// ParseCUDAVersion reads a CUDA version "MAJOR.MINOR" or
// "MAJOR.MINOR.PATCH" such as "12.6", "12.6.11" or "13.0"; the patch level is
// dropped. Spaces around the text are ignored. Each part is decimal digits
// without a leading zero (a lone 0 is fine), the major version is at least 1
// and each part has at most 4 digits. Anything else returns a
// *CUDAVersionError that quotes the input.
func ParseCUDAVersion(s string) (CUDAVersion, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return CUDAVersion{}, &CUDAVersionError{Input: s}
	}
	var n [3]int
	for i, p := range parts {
		if len(p) == 0 || len(p) > 4 || (len(p) > 1 && p[0] == '0') || !allDigits(p) {
			return CUDAVersion{}, &CUDAVersionError{Input: s}
		}
		n[i], _ = strconv.Atoi(p)
	}
	if n[0] < 1 {
		return CUDAVersion{}, &CUDAVersionError{Input: s}
	}
	return CUDAVersion{Major: n[0], Minor: n[1]}, nil
}

// String writes v as "12.6".
func (v CUDAVersion) String() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

// Less reports whether v is an older release than o.
func (v CUDAVersion) Less(o CUDAVersion) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	return v.Minor < o.Minor
}

// IsZero reports whether v is the zero value (no version).
func (v CUDAVersion) IsZero() bool {
	return v == CUDAVersion{}
}

// MarshalText writes v as String does; the zero value is an empty string.
func (v CUDAVersion) MarshalText() ([]byte, error) {
	if v.IsZero() {
		return []byte{}, nil
	}
	return []byte(v.String()), nil
}

// UnmarshalText reads any form ParseCUDAVersion accepts; an empty text gives
// the zero value.
func (v *CUDAVersion) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*v = CUDAVersion{}
		return nil
	}
	p, err := ParseCUDAVersion(string(text))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// ToolchainError explains why a CUDA toolkit cannot build an SM.
type ToolchainError struct {
	// SM is the target asked for.
	SM Capability
	// CUDA is the toolkit version asked for.
	CUDA CUDAVersion
	// Reason says why, and what would work.
	Reason string
}

// Error reads like "CUDA 12.6 cannot build sm_110: sm_110 needs CUDA >= 13.0; ...".
func (e *ToolchainError) Error() string {
	return "CUDA " + e.CUDA.String() + " cannot build " + e.SM.SM() + ": " + e.Reason
}

// ToolchainRow says which CUDA releases build one SM: from Since on, and
// before Until when Until is set.
type ToolchainRow struct {
	// SM is the target.
	SM Capability `json:"sm"`
	// Since is the first CUDA whose nvcc builds it.
	Since CUDAVersion `json:"since"`
	// Until, when set, is the first CUDA that no longer builds it.
	Until CUDAVersion `json:"until,omitzero"`
	// Gone, when set, is the reason the SM stopped being a target at Until.
	Gone string `json:"gone,omitempty"`
}

// thorSM101Since is the first CUDA that builds Thor, as sm_101.
func thorSM101Since() CUDAVersion { return CUDAVersion{Major: 12, Minor: 8} }

// thorSM110Since is the first CUDA that calls Thor sm_110, where sm_101 is
// invalid.
func thorSM110Since() CUDAVersion { return CUDAVersion{Major: 13, Minor: 0} }

// CanCompile reports whether CUDA v's nvcc can produce a working binary for
// sm. It returns nil, or a *ToolchainError that explains why not and what
// would work. The rules are rows of the table (toolchainRows in
// computecap/facts.go), one per SM; an SM missing from it is an error too,
// whose sentence lists the SMs the table knows.
func CanCompile(sm Capability, v CUDAVersion) error {
	return defaultTable.CanCompile(sm, v)
}

// CanCompile is the package's CanCompile with the toolchain rows of t.
func (t *Table) CanCompile(sm Capability, v CUDAVersion) error {
	fail := func(reason string) error { return &ToolchainError{SM: sm, CUDA: v, Reason: reason} }
	if !sm.Valid() {
		return fail(sm.String() + " is not a valid compute capability")
	}
	if v.Major < 1 || v.Minor < 0 {
		return fail("CUDA " + v.String() + " is not a valid CUDA version")
	}
	if c := t.Canonical(sm); c.Major == 11 && c.Minor == 0 {
		return thorToolchain(sm, v, fail)
	}
	for _, row := range t.Toolchain {
		if row.SM != sm {
			continue
		}
		if v.Less(row.Since) {
			return fail(sm.SM() + " needs CUDA >= " + row.Since.String())
		}
		if !row.Until.IsZero() && !v.Less(row.Until) {
			return fail(sm.SM() + " is not a target from CUDA " + row.Until.String() + " on (" + row.Gone +
				"); use a CUDA from " + row.Since.String() + " up to but not including " + row.Until.String())
		}
		return nil
	}
	// For contributors: an SM is known by its row in toolchainRows
	// (computecap/facts.go); the sentence is for users of the binary.
	return fail("jetbake knows no CUDA release that builds " + sm.SM() + "; the SMs it knows: " +
		knownText(t.KnownSMs()) + "; a newer jetbake may know " + sm.SM())
}

// thorToolchain applies the Thor rules: sm_101 (and sm_101a) build with CUDA
// 12.8 and 12.9 only, sm_110 needs CUDA 13.0 or later, and sm_110a is
// refused because not every nvcc accepts it.
func thorToolchain(sm Capability, v CUDAVersion, fail func(string) error) error {
	inSM101Era := !v.Less(thorSM101Since()) && v.Less(thorSM110Since())
	switch {
	case sm.Major == 11 && sm.ArchSpecific:
		return fail("sm_110a is not accepted by every nvcc; build plain sm_110 with CUDA >= 13.0")
	case sm.Major == 11 && inSM101Era:
		return fail("sm_110 needs CUDA >= 13.0; CUDA " + v.String() +
			" calls Thor sm_101 (12.8-12.9 only), and a CUDA 12.x toolchain cannot produce a working sm_110 binary")
	case sm.Major == 11 && v.Less(thorSM110Since()):
		return fail("sm_110 needs CUDA >= 13.0 (CUDA 12.8-12.9 knew Thor as sm_101, earlier releases not at all)")
	case sm.Major == 11:
		return nil
	case v.Less(thorSM101Since()):
		return fail(sm.SM() + " needs CUDA 12.8 or 12.9 (Thor's name there; CUDA 13.0 and later call it sm_110)")
	case !inSM101Era:
		return fail(sm.SM() + " is invalid from CUDA 13.0 on, where Thor is sm_110: build sm_110")
	default:
		return nil
	}
}

// NVCCArch is the architecture name CUDA v's nvcc uses for sm: Thor (10.1
// or 11.0) is "sm_101" before CUDA 13.0 (it exists in 12.8 and 12.9 only)
// and "sm_110" from 13.0 on, keeping an arch-specific "a"; every other SM is
// sm.SM(). NVCCArch does not check that v can build sm: see CanCompile.
func NVCCArch(sm Capability, v CUDAVersion) string {
	c := sm.Canonical()
	if c.Major == 11 && c.Minor == 0 {
		if v.Less(thorSM110Since()) {
			c.Major, c.Minor = 10, 1
		}
		return c.SM()
	}
	return sm.SM()
}

// GPUCodes are the real architectures CUDA v's nvcc lists for
// `nvcc --list-gpu-code` (sm_50 ... sm_90, Thor as sm_101 or sm_110), in
// increasing order: every SM of the toolchain rows, and Thor, that
// CanCompile says v builds, by the name NVCCArch gives it under v.
// Arch-specific targets (sm_90a) are left out, as the builds that read the
// list (bindgen_cuda, which candle's kernel crates use) skip them.
func GPUCodes(v CUDAVersion) []Capability {
	return defaultTable.GPUCodes(v)
}

// GPUCodes is the package's GPUCodes with the toolchain rows of t.
func (t *Table) GPUCodes(v CUDAVersion) []Capability {
	var out []Capability
	for _, row := range t.Toolchain {
		if !row.SM.ArchSpecific && t.CanCompile(row.SM, v) == nil {
			out = append(out, row.SM)
		}
	}
	for _, thor := range []Capability{{Major: 10, Minor: 1}, {Major: 11, Minor: 0}} {
		if t.CanCompile(thor, v) == nil {
			out = append(out, thor)
		}
	}
	slices.SortFunc(out, Capability.Compare)
	return slices.Compact(out)
}
