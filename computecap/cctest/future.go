// Package cctest holds table values for tests: the shipped table of
// package computecap with a fictional future Jetson added, to show that
// every rule reads the table and no code change is needed for a new row.
package cctest

import "github.com/jetbake/jetbake/computecap"

// Future Jetson facts: a fictional SoC "tegra300" (soc_id 41) with an SM
// 12.5 GPU, on a fictional JetPack 8.0 (L4T 40.1.0, CUDA 14.0, SBSA).
const (
	FutureSoCName = "tegra300"
	FutureSocID   = 41
	FutureJetPack = "8.0"
	FutureL4T     = "40.1.0"
	FutureModule  = "Jetson AGX Future"
	FuturePart    = "p9999-0001"
	FutureMachine = "NVIDIA Jetson AGX Future Developer Kit"
)

// FutureSM is the fictional Jetson's compute capability, 12.5.
func FutureSM() computecap.Capability { return computecap.Capability{Major: 12, Minor: 5} }

// FutureCUDA is the fictional JetPack's CUDA, 14.0.
func FutureCUDA() computecap.CUDAVersion { return computecap.CUDAVersion{Major: 14, Minor: 0} }

// FutureTable returns the shipped table plus one SoC row, one JetPack row
// and one toolchain row for the fictional Jetson: exactly what a developer
// adds for a new Jetson.
func FutureTable() *computecap.Table {
	t := computecap.DefaultTable()
	t.SoCs = append(t.SoCs, computecap.SoC{
		Name: FutureSoCName, SocID: FutureSocID, Family: "Future", Capability: FutureSM(),
		JetPacks: []string{"8"},
		Modules:  []computecap.Module{{Class: FutureModule, Parts: []string{FuturePart}, Words: []string{"AGX Future"}}},
	})
	t.JetPacks = append(t.JetPacks, computecap.JetPackRelease{
		JetPack: FutureJetPack, L4T: FutureL4T, CUDA: FutureCUDA(), Ubuntu: "26.04",
		Flavour: computecap.FlavourSBSA, Rule: computecap.RuleDriverCUDA,
	})
	t.Toolchain = append(t.Toolchain, computecap.ToolchainRow{SM: FutureSM(), Since: FutureCUDA()})
	return t
}
