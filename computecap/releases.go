package computecap

// The table's JetPack releases: the rows, and the lookups from an L4T
// release or a JetPack version to a row, its CUDA flavour, host rule, driver
// CUDA and forward-compatibility folders.

import (
	"slices"
	"strings"
)

// Releases returns the JetPack rows, oldest first, each with the
// capabilities of the SoCs whose JetPack lines cover it. Each call returns
// fresh slices.
func (t *Table) Releases() []JetPackRelease {
	out := make([]JetPackRelease, len(t.JetPacks))
	for i, r := range t.JetPacks {
		out[i] = t.release(r)
	}
	return out
}

// release returns row r with fresh slices and the capabilities of the SoCs
// whose JetPack lines cover it. The lookups below iterate t.JetPacks and
// copy only the row they return, so that one lookup does not copy the
// whole table.
func (t *Table) release(r JetPackRelease) JetPackRelease {
	r.AlsoL4T, r.DriverDirs = slices.Clone(r.AlsoL4T), cloneDriverDirs(r.DriverDirs)
	r.Capabilities = nil
	for _, s := range t.SoCs {
		if s.Supports(r.JetPack) {
			r.Capabilities = append(r.Capabilities, s.Capability)
		}
	}
	return r
}

// Supports reports whether one of the SoC's JetPack lines covers the
// JetPack version jetpack.
func (s SoC) Supports(jetpack string) bool {
	for _, line := range s.JetPacks {
		if LineCovers(line, jetpack) {
			return true
		}
	}
	return false
}

// LineCovers reports whether the JetPack (or L4T) line covers version v,
// comparing whole dot-separated parts: "6" covers "6.2.1", "7.2" covers
// "7.2.1" but not "7.20", and every version covers itself.
func LineCovers(line, v string) bool {
	line, v = strings.TrimSpace(line), strings.TrimSpace(v)
	return line != "" && (v == line || strings.HasPrefix(v, line+"."))
}

// ReleaseForL4T finds the JetPack release whose L4T version is exactly v
// (its L4T or one of AlsoL4T).
func (t *Table) ReleaseForL4T(v L4TVersion) (JetPackRelease, bool) {
	for _, r := range t.JetPacks {
		if l, err := ParseL4TVersion(r.L4T); err == nil && l == v {
			return t.release(r), true
		}
		for _, a := range r.AlsoL4T {
			if l, err := ParseL4TVersion(a); err == nil && l == v {
				return t.release(r), true
			}
		}
	}
	return JetPackRelease{}, false
}

// releasesOfMajor returns the rows whose L4T major is major, oldest first.
func (t *Table) releasesOfMajor(major int) []JetPackRelease {
	var out []JetPackRelease
	for _, r := range t.JetPacks {
		if l, err := ParseL4TVersion(r.L4T); err == nil && l.Major == major {
			out = append(out, t.release(r))
		}
	}
	return out
}

// JetPackForL4TMajor names the JetPack releases of an L4T major for
// messages: "6" when it spans more than two minors (36), else the
// major.minor versions joined by "/" ("7.0/7.1" for 38, "7.2" for 39).
// Developer previews count only when the major has nothing else (34 is
// "5.0"). Unknown majors return false.
func (t *Table) JetPackForL4TMajor(major int) (string, bool) {
	rows := t.releasesOfMajor(major)
	var lines []string
	for _, preview := range []bool{false, true} {
		for _, r := range rows {
			mm := majorMinor(r.JetPack)
			if r.Preview == preview && !slices.Contains(lines, mm) {
				lines = append(lines, mm)
			}
		}
		if len(lines) > 0 {
			break
		}
	}
	switch {
	case len(lines) == 0:
		return "", false
	case len(lines) > 2:
		head, _, _ := strings.Cut(lines[0], ".")
		return head, true
	default:
		return strings.Join(lines, "/"), true
	}
}

// majorMinor cuts a version to its first two parts.
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// JetPackName names the JetPack of an L4T release for messages: the exact
// release ("7.0" for 38.2.0), else the series of its major ("6"), else "".
func (t *Table) JetPackName(v L4TVersion) string {
	if r, ok := t.ReleaseForL4T(v); ok {
		return r.JetPack
	}
	s, _ := t.JetPackForL4TMajor(v.Major)
	return s
}

// L4TMajorForJetPack maps a JetPack version to its L4T major: an exact row
// first ("5.0" is R34, a developer preview), then the longest row that is a
// line of it ("5.1.3" is in "5.1", R35), then the rows it is a line of,
// which must agree ("6" is R36; "7" is R38 or R39 and returns false;
// developer previews do not count). Malformed text returns false.
func (t *Table) L4TMajorForJetPack(jetpack string) (int, bool) {
	jetpack = strings.TrimSpace(jetpack)
	if !validJetPack(jetpack) {
		return 0, false
	}
	rows := t.JetPacks
	best := -1
	for i, r := range rows {
		if LineCovers(r.JetPack, jetpack) && (best < 0 || len(r.JetPack) > len(rows[best].JetPack)) {
			best = i
		}
	}
	if best >= 0 {
		l, err := ParseL4TVersion(rows[best].L4T)
		return l.Major, err == nil
	}
	major := 0
	for _, r := range rows {
		if r.Preview || !LineCovers(jetpack, r.JetPack) {
			continue
		}
		l, err := ParseL4TVersion(r.L4T)
		if err != nil || (major != 0 && l.Major != major) {
			return 0, false
		}
		major = l.Major
	}
	return major, major != 0
}

// validJetPack accepts one to three dot-separated parts of 1 to 3 digits.
func validJetPack(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 || len(p) > 3 || !allDigits(p) {
			return false
		}
	}
	return true
}

// FlavourOfL4T is the CUDA flavour of the releases of an L4T major; false
// when the table has none.
func (t *Table) FlavourOfL4T(major int) (Flavour, HostRule, bool) {
	rows := t.releasesOfMajor(major)
	if len(rows) == 0 {
		return "", "", false
	}
	return rows[0].Flavour, rows[0].Rule, true
}

// DriverCUDAForL4T is the CUDA version of the driver a host of L4T v has,
// from the table: its exact release, else the newest release of its major
// not newer than v, else the oldest of its major.
func (t *Table) DriverCUDAForL4T(v L4TVersion) (CUDAVersion, bool) {
	if r, ok := t.ReleaseForL4T(v); ok {
		return r.CUDA, true
	}
	rows := t.releasesOfMajor(v.Major)
	if len(rows) == 0 {
		return CUDAVersion{}, false
	}
	best := rows[0]
	for _, r := range rows {
		if l, err := ParseL4TVersion(r.L4T); err == nil && !v.Less(l) {
			best = r
		}
	}
	return best.CUDA, true
}

// ShippedCompat lists the forward-compatibility folders an image of the
// given flavour and CUDA ships, from the SoC rows.
func (t *Table) ShippedCompat(f Flavour, cuda CUDAVersion) []string {
	var dirs []string
	for _, s := range t.SoCs {
		for _, fc := range s.ForwardCompat {
			if fc.Flavour == f && !cuda.Less(fc.Since) && !slices.Contains(dirs, fc.Dir) {
				dirs = append(dirs, fc.Dir)
			}
		}
	}
	return dirs
}
