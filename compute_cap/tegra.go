package computecap

import "strings"

// SoC is a Tegra system-on-chip of a Jetson module.
type SoC struct {
	// Name is the device-tree name such as "tegra234".
	Name string
	// SocID is the decimal value of /sys/devices/soc0/soc_id, such as 35.
	SocID int
	// Family is the Jetson family such as "Orin".
	Family string
	// Capability is the compute capability of the integrated GPU, in its
	// canonical form (Thor is 11.0).
	Capability Capability
}

// socs returns the known Jetson SoCs, oldest first. It is a function rather
// than a package variable so that no caller can change the table.
func socs() [5]SoC {
	return [...]SoC{
		{Name: "tegra210", SocID: 33, Family: "Nano/TX1", Capability: Capability{Major: 5, Minor: 3}},
		{Name: "tegra186", SocID: 24, Family: "TX2", Capability: Capability{Major: 6, Minor: 2}},
		{Name: "tegra194", SocID: 25, Family: "Xavier", Capability: Capability{Major: 7, Minor: 2}},
		{Name: "tegra234", SocID: 35, Family: "Orin", Capability: Capability{Major: 8, Minor: 7}},
		{Name: "tegra264", SocID: 38, Family: "Thor", Capability: Capability{Major: 11, Minor: 0}},
	}
}

// SoCs returns the Jetson SoCs that jetbake knows, oldest first.
func SoCs() []SoC {
	all := socs()
	return all[:]
}

// SoCByCompatible finds the SoC named by one device-tree compatible entry
// such as "nvidia,tegra234"; a bare "tegra234" is accepted too. Spaces and
// NUL bytes around the entry are ignored. Board entries such as
// "nvidia,p3767-0005" and non-Jetson SoCs return false.
func SoCByCompatible(entry string) (SoC, bool) {
	entry = strings.Trim(entry, " \t\r\n\x00")
	entry = strings.TrimPrefix(entry, "nvidia,")
	for _, s := range socs() {
		if s.Name == entry {
			return s, true
		}
	}
	return SoC{}, false
}

// SoCFromDeviceTree finds the SoC in the content of
// /proc/device-tree/compatible: NUL-separated entries with the SoC last,
// such as "nvidia,p3768-0000+p3767-0005\x00nvidia,p3767-0005\x00nvidia,tegra234\x00".
// It returns the first entry that names a known Jetson SoC.
func SoCFromDeviceTree(compatible []byte) (SoC, bool) {
	for entry := range strings.SplitSeq(string(compatible), "\x00") {
		if s, ok := SoCByCompatible(entry); ok {
			return s, true
		}
	}
	return SoC{}, false
}

// SoCByID finds the SoC with the decimal /sys/devices/soc0/soc_id value id:
// 33 T210 (Nano/TX1), 24 T186 (TX2), 25 T194 (Xavier), 35 T234 (Orin) and
// 38 T264 (Thor). Other ids, such as 36 for T241 Grace, are not Jetson
// modules and return false.
func SoCByID(id int) (SoC, bool) {
	for _, s := range socs() {
		if s.SocID == id {
			return s, true
		}
	}
	return SoC{}, false
}

// SoCByCapability finds the SoC whose integrated GPU has capability c
// (compared in canonical form, ignoring the arch-specific flag).
func SoCByCapability(c Capability) (SoC, bool) {
	return socByCapability(c)
}

func socByCapability(c Capability) (SoC, bool) {
	c = c.Canonical()
	for _, s := range socs() {
		if s.Capability.Major == c.Major && s.Capability.Minor == c.Minor {
			return s, true
		}
	}
	return SoC{}, false
}

// Describe names the GPU of capability c for messages: "Jetson Orin, SM 8.7",
// "Jetson Thor, SM 11.0", "Jetson Xavier, SM 7.2", and for other GPUs
// "GPU with SM 8.6". The SM shown is c as given (a Thor reporting 10.1
// reads "Jetson Thor, SM 10.1").
func Describe(c Capability) string {
	if s, ok := socByCapability(c); ok {
		return "Jetson " + s.Family + ", SM " + c.String()
	}
	return "GPU with SM " + c.String()
}

// describeParen is Describe with the SM in parentheses: "Jetson Orin (SM 8.7)".
func describeParen(c Capability) string {
	if s, ok := socByCapability(c); ok {
		return "Jetson " + s.Family + " (SM " + c.String() + ")"
	}
	return "GPU with SM " + c.String()
}
