package computecap

import (
	"slices"
	"strconv"
)

// ImageNeeds is what the host rule needs to know of an image.
type ImageNeeds struct {
	// L4T is the L4T release the image was built for; zero for an image
	// that is not for a Jetson (no host rule applies).
	L4T L4TVersion
	// CUDA is the image's CUDA version; zero when unknown.
	CUDA CUDAVersion
	// CompatDirs are the forward-compatibility folders the image ships
	// (see SoC.ForwardCompat and Table.ShippedCompat).
	CompatDirs []string
}

// HostState is what is known of a host: any field may be missing.
type HostState struct {
	// SoC is the host's SoC when HasSoC.
	SoC    SoC
	HasSoC bool
	// L4T is the host's Jetson Linux release when HasL4T.
	L4T    L4TVersion
	HasL4T bool
	// Driver is the CUDA version of the host's driver (cuDriverGetVersion)
	// when HasDriver.
	Driver    CUDAVersion
	HasDriver bool
}

// HostVerdict is the answer of Table.CheckHost.
type HostVerdict struct {
	// OK is true when the image may start on the host.
	OK bool
	// Rule is the rule that decided; "" for an image that is not for a Jetson.
	Rule HostRule
	// Unknown is true when the host lacks the fact the rule compares, so
	// nothing could be checked (OK is then true).
	Unknown bool
	// Host describes the host's version the rule compared, such as
	// "L4T R36.3.0 (JetPack 6.0)" or "a driver for CUDA 13.0 on L4T R38.2.0
	// (JetPack 7.0)".
	Host string
	// Need describes what the image needs, such as "L4T R36.4 or a later
	// R36 release".
	Need string
	// Upgrade names the oldest JetPack release that fits, such as "JetPack
	// 6.1 (L4T 36.4.0)"; "" when the table has none.
	Upgrade string
	// CompatDir is the forward-compatibility folder to use when the image
	// runs only thanks to it.
	CompatDir string
	// DriverFromTable is true when the driver's CUDA version came from the
	// table by the host's L4T, because the driver was not asked.
	DriverFromTable bool
}

// Reason is the refusal in one clause: "the host has L4T R36.3.0 (JetPack
// 6.0) but the image needs L4T R36.4 or a later R36 release". It is "" when
// the verdict is OK.
func (v HostVerdict) Reason() string {
	if v.OK {
		return ""
	}
	return "the host has " + v.Host + " but the image needs " + v.Need
}

// CheckHost applies the host rule of the image's JetPack flavour:
//
//   - Tegra flavour (JetPack 6 and earlier, RuleL4T): the host's L4T major
//     must be the image's, and its major.minor at least the first L4T of
//     that major that ships the image's CUDA (a 36.4 image with CUDA 12.6
//     needs 36.4 or later; 36.3 ships CUDA 12.2).
//   - SBSA flavour (JetPack 7 and later, RuleDriverCUDA): the driver's CUDA
//     version (h.Driver, or the table's CUDA for the host's L4T) must have
//     the image's CUDA major and at least its minor, unless the image ships
//     forward-compatibility libraries for the host's SoC: then the verdict
//     is OK with CompatDir set.
//
// A host that lacks the compared fact passes with Unknown set. The rule is
// pure: the entrypoint applies it to the host it runs on, and the builder to
// the hosts a tag covers.
func (t *Table) CheckHost(img ImageNeeds, h HostState) HostVerdict {
	if img.L4T.Major == 0 {
		return HostVerdict{OK: true}
	}
	if _, rule, known := t.FlavourOfL4T(img.L4T.Major); !known || rule != RuleDriverCUDA || img.CUDA.IsZero() {
		return t.checkL4T(img, h)
	}
	return t.checkDriver(img, h)
}

// checkL4T applies RuleL4T.
func (t *Table) checkL4T(img ImageNeeds, h HostState) HostVerdict {
	v := HostVerdict{Rule: RuleL4T}
	need := t.minL4T(img)
	v.Need = "L4T R" + need.MajorMinor() + " or a later R" + strconv.Itoa(need.Major) + " release"
	if !h.HasL4T {
		v.OK, v.Unknown = true, true
		return v
	}
	v.Host = t.describeL4T(h.L4T)
	if h.L4T.Major == need.Major && !lessMinor(h.L4T, need) {
		v.OK = true
		return v
	}
	v.Upgrade = t.upgrade(h, func(r JetPackRelease, l L4TVersion) bool {
		return l.Major == need.Major && !lessMinor(l, need)
	})
	return v
}

// checkDriver applies RuleDriverCUDA.
func (t *Table) checkDriver(img ImageNeeds, h HostState) HostVerdict {
	v := HostVerdict{Rule: RuleDriverCUDA}
	v.Need = "a driver for CUDA " + img.CUDA.String() + " or a later " + strconv.Itoa(img.CUDA.Major) + ".x"
	driver, ok := h.Driver, h.HasDriver
	if !ok && h.HasL4T {
		driver, ok = t.DriverCUDAForL4T(h.L4T)
		v.DriverFromTable = ok
	}
	if !ok {
		v.OK, v.Unknown = true, true
		return v
	}
	v.Host = "a driver for CUDA " + driver.String()
	if h.HasL4T {
		v.Host += " on " + t.describeL4T(h.L4T)
	}
	if driver.Major == img.CUDA.Major && !driver.Less(img.CUDA) {
		v.OK = true
		return v
	}
	if dir := t.compatFor(img, h); dir != "" && driver.Major == img.CUDA.Major {
		v.OK, v.CompatDir = true, dir
		return v
	}
	v.Upgrade = t.upgrade(h, func(r JetPackRelease, _ L4TVersion) bool {
		return r.CUDA.Major == img.CUDA.Major && !r.CUDA.Less(img.CUDA)
	})
	return v
}

// compatFor returns the forward-compatibility folder of the host's SoC that
// the image ships and whose CUDA it is, or "".
func (t *Table) compatFor(img ImageNeeds, h HostState) string {
	if !h.HasSoC {
		return ""
	}
	for _, fc := range h.SoC.ForwardCompat {
		if slices.Contains(img.CompatDirs, fc.Dir) && !img.CUDA.Less(fc.Since) {
			return fc.Dir
		}
	}
	return ""
}

// minL4T is the first L4T (major.minor) of the image's major whose CUDA is
// at least the image's, or the image's own L4T when the table has none.
func (t *Table) minL4T(img ImageNeeds) L4TVersion {
	need := L4TVersion{Major: img.L4T.Major, Minor: img.L4T.Minor}
	if img.CUDA.IsZero() {
		return need
	}
	for _, r := range t.releasesOfMajor(img.L4T.Major) {
		l, err := ParseL4TVersion(r.L4T)
		if err != nil || r.Preview || r.CUDA.Major != img.CUDA.Major || r.CUDA.Less(img.CUDA) {
			continue
		}
		if l = (L4TVersion{Major: l.Major, Minor: l.Minor}); l.Less(need) {
			need = l
		}
	}
	return need
}

// lessMinor compares major.minor only.
func lessMinor(a, b L4TVersion) bool {
	return L4TVersion{Major: a.Major, Minor: a.Minor}.Less(L4TVersion{Major: b.Major, Minor: b.Minor})
}

// describeL4T writes "L4T R36.3.0 (JetPack 6.0)".
func (t *Table) describeL4T(l L4TVersion) string {
	s := "L4T R" + l.String()
	if jp := t.JetPackName(l); jp != "" {
		s += " (JetPack " + jp + ")"
	}
	return s
}

// upgrade names the oldest release that fits and supports the host's SoC.
func (t *Table) upgrade(h HostState, fits func(JetPackRelease, L4TVersion) bool) string {
	for _, r := range t.JetPacks {
		l, err := ParseL4TVersion(r.L4T)
		if err != nil || r.Preview || !fits(r, l) || (h.HasSoC && !h.SoC.Supports(r.JetPack)) {
			continue
		}
		if h.HasL4T && l.Less(h.L4T) {
			continue
		}
		return "JetPack " + r.JetPack + " (L4T " + r.L4T + ")"
	}
	return ""
}
