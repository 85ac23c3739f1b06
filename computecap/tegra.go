package computecap

// The functions below answer from the shipped table (DefaultTable); the
// methods of Table answer from any table, such as one with a future Jetson
// added.

// SoCs returns the Jetson SoCs that jetbake knows, oldest first. Each call
// returns a fresh copy.
func SoCs() []SoC {
	return DefaultTable().SoCs
}

// SoCByCompatible finds the SoC named by one device-tree compatible entry
// such as "nvidia,tegra234"; a bare "tegra234" is accepted too. Spaces and
// NUL bytes around the entry are ignored. Board entries such as
// "nvidia,p3767-0005" and non-Jetson SoCs return false.
func SoCByCompatible(entry string) (SoC, bool) {
	return cloneSoC(defaultTable.SoCByCompatible(entry))
}

// SoCByID finds the SoC with the decimal /sys/devices/soc0/soc_id value id:
// 33 T210 (Nano/TX1), 24 T186 (TX2), 25 T194 (Xavier), 35 T234 (Orin) and
// 38 T264 (Thor). Other ids, such as 36 for T241 Grace, are not Jetson
// modules and return false.
func SoCByID(id int) (SoC, bool) {
	return cloneSoC(defaultTable.SoCByID(id))
}

// SoCByCapability finds the SoC whose integrated GPU has capability c
// (compared in canonical form, ignoring the arch-specific flag).
func SoCByCapability(c Capability) (SoC, bool) {
	return cloneSoC(defaultTable.SoCByCapability(c))
}

// Describe names the GPU of capability c for messages: "Jetson Orin, SM 8.7",
// "Jetson Thor, SM 11.0", "Jetson Xavier, SM 7.2", and for other GPUs
// "GPU with SM 8.6". The SM shown is c as given (a Thor reporting 10.1
// reads "Jetson Thor, SM 10.1").
func Describe(c Capability) string {
	return defaultTable.Describe(c)
}

// cloneSoC deep-copies a SoC of the shipped table, so that no caller can
// change the table through its slices.
func cloneSoC(s SoC, ok bool) (SoC, bool) {
	if !ok {
		return s, false
	}
	t := Table{SoCs: []SoC{s}}
	return t.Clone().SoCs[0], true
}
