package computecap

import (
	"slices"
	"strings"
)

// Flavour is the kind of CUDA a JetPack release ships: the integrated
// Tegra CUDA of JetPack 4 to 6, or the server-style SBSA CUDA of JetPack 7.
type Flavour string

// The CUDA flavours of JetPack releases.
const (
	// FlavourTegra is JetPack 6 and earlier: CUDA tied to the L4T release.
	FlavourTegra Flavour = "tegra"
	// FlavourSBSA is JetPack 7 and later: arm64 server CUDA, tied to the
	// driver's CUDA version.
	FlavourSBSA Flavour = "sbsa"
)

// HostRule names the rule that decides whether an image runs on a host
// (see Table.CheckHost).
type HostRule string

// The host rules.
const (
	// RuleL4T (Tegra flavour): the host's L4T major must be the image's, and
	// its major.minor at least the first L4T that ships the image's CUDA.
	RuleL4T HostRule = "l4t"
	// RuleDriverCUDA (SBSA flavour): the driver's CUDA major must be the
	// image's, and its minor at least the image's, unless the image ships
	// forward-compatibility libraries for the GPU.
	RuleDriverCUDA HostRule = "driver-cuda"
)

// Module is one Jetson module (or family of modules) of a SoC, as the probe
// names its device class.
type Module struct {
	// Class is the device class, as the matrix's hardware lists name it,
	// such as "Jetson AGX Orin".
	Class string `json:"class"`
	// Parts are module part numbers as the device tree's compatible entries
	// write them ("p3767-0005"); a part matches when it equals one or
	// continues it with '-' ("p3701" matches "p3701-0005").
	Parts []string `json:"parts,omitempty"`
	// Words must all appear in the board name (device-tree model, or
	// /sys/devices/soc0/machine) when no part number is visible.
	Words []string `json:"words,omitempty"`
}

// ForwardCompat is a folder of CUDA forward-compatibility libraries that
// images ship for one SoC's GPU.
type ForwardCompat struct {
	// Dir is the folder in the image, such as "/usr/local/cuda/compat_orin".
	Dir string `json:"dir"`
	// Since is the first image CUDA that ships it.
	Since CUDAVersion `json:"since"`
	// Flavour is the image flavour that ships it.
	Flavour Flavour `json:"flavour"`
}

// SoC is a Tegra system-on-chip of a Jetson module: one row of the table.
type SoC struct {
	// Name is the device-tree name such as "tegra234" (compatible
	// "nvidia,tegra234").
	Name string `json:"name"`
	// SocID is the decimal value of /sys/devices/soc0/soc_id, such as 35.
	SocID int `json:"soc_id"`
	// Family is the Jetson family such as "Orin".
	Family string `json:"family"`
	// Capability is the compute capability of the integrated GPU, in its
	// canonical form (Thor is 11.0).
	Capability Capability `json:"sm"`
	// Aliases are other capabilities the same GPU reports (Thor: 10.1 with
	// the nvgpu driver and CUDA 12.x).
	Aliases []Capability `json:"aliases,omitempty"`
	// Modules are the modules built on it, the more specific ones first.
	Modules []Module `json:"modules"`
	// JetPacks are the JetPack lines that support it: "6" is every 6.x,
	// "7.2" is 7.2 and its patch releases.
	JetPacks []string `json:"jetpacks"`
	// ForwardCompat lists the forward-compatibility libraries images ship
	// for its GPU.
	ForwardCompat []ForwardCompat `json:"forward_compat,omitempty"`
	// CPU is the SoC's CPU core.
	CPU CPU `json:"cpu,omitzero"`
	// Unpromised are cubins of other SMs reported to run on this GPU,
	// which NVIDIA does not promise: they count as no code for it.
	Unpromised []UnpromisedCode `json:"unpromised,omitempty"`
}

// UnpromisedCode is a cubin of another SM reported to run on a Jetson GPU,
// against NVIDIA's rule that a Tegra GPU runs only code built for its own
// SM.
type UnpromisedCode struct {
	// Compiled is the SM the cubin is built for, such as 8.0.
	Compiled Capability `json:"compiled"`
	// Source says who reported it.
	Source string `json:"source"`
}

// CPU is a Jetson SoC's CPU core: what code tuned for it may use.
type CPU struct {
	// Name is the core's name, which is also its -C target-cpu (LLVM
	// -mcpu) name in lower case, such as "Cortex-A78AE".
	Name string `json:"name"`
	// Features are the CPU features Linux reports for it in /proc/cpuinfo's
	// "Features" line, when known; nil when not.
	Features []string `json:"features,omitempty"`
}

// JetPackRelease is one JetPack release: one row of the table.
type JetPackRelease struct {
	// JetPack is the JetPack version, such as "6.2".
	JetPack string `json:"jetpack"`
	// L4T is the Jetson Linux version, such as "36.4.3".
	L4T string `json:"l4t"`
	// AlsoL4T are other L4T versions reported as the same JetPack release
	// (36.4.7 is also called JetPack 6.2.1).
	AlsoL4T []string `json:"also_l4t,omitempty"`
	// CUDA is the CUDA release shipped with it.
	CUDA CUDAVersion `json:"cuda"`
	// Ubuntu is the Ubuntu release of its root filesystem, such as "22.04".
	Ubuntu string `json:"ubuntu"`
	// Flavour is the kind of CUDA it ships.
	Flavour Flavour `json:"flavour"`
	// Rule is the host rule its images follow.
	Rule HostRule `json:"rule"`
	// Preview marks a developer preview (JetPack 5.0 and 5.0.1 on R34):
	// known, but never the answer for a JetPack line such as "5".
	Preview bool `json:"preview,omitempty"`
	// Capabilities are the SMs of the SoCs whose JetPack lines cover it;
	// Table.Releases fills them from the SoC rows. In a declared row
	// (Table.Declare) they name the SoCs whose lines gain the release.
	Capabilities []Capability `json:"sms"`
	// DriverDirs are where the host's CUDA driver (libcuda.so.1.1 and its
	// libcuda.so.1 link) lives on its Jetsons, the folders NVIDIA's runtime
	// mounts it from and into containers: one for every SoC, or one per GPU
	// driver (see DriverDirFor).
	DriverDirs []DriverDir `json:"driver_dirs"`
}

// Table is the one table of Jetson facts: SoCs, JetPack releases and which
// CUDA builds which SM. Every rule of jetbake reads it; DefaultTable returns
// the shipped rows, and tests add rows to a copy.
type Table struct {
	// SoCs are the Jetson SoCs, oldest first.
	SoCs []SoC
	// JetPacks are the JetPack releases, oldest first.
	JetPacks []JetPackRelease
	// Toolchain says which CUDA releases build each SM (Thor is handled
	// apart, see CanCompile).
	Toolchain []ToolchainRow
	// BaseRepositories are the base image repositories whose CUDA flavour
	// is known.
	BaseRepositories []BaseRepository
	// BaseImages are base images known to exist, offered by fixes.
	BaseImages []BaseImage
	// Frameworks are NVIDIA's framework containers (PyTorch) by JetPack
	// line, oldest first.
	Frameworks []FrameworkContainer
	// CrossTargets are what a cross build base holds per CUDA flavour.
	CrossTargets []CrossTarget
	// CrossRecipes are how the cross build base's recipe builds each
	// JetPack line's base.
	CrossRecipes []CrossRecipe
	// Declared are the rows Declare added to the shipped ones (the user's
	// own facts), as they were declared; empty in the shipped table.
	Declared Facts
}

// defaultTable holds the shipped rows. It is built once and never changed:
// DefaultTable hands out copies.
var defaultTable = newDefaultTable()

// DefaultTable returns a copy of the shipped table, which the caller may
// change (for example to add a future Jetson in a test).
func DefaultTable() *Table {
	return defaultTable.Clone()
}

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table {
	c := &Table{
		SoCs:      slices.Clone(t.SoCs),
		JetPacks:  slices.Clone(t.JetPacks),
		Toolchain: slices.Clone(t.Toolchain),

		BaseRepositories: slices.Clone(t.BaseRepositories),
		BaseImages:       slices.Clone(t.BaseImages),
		Frameworks:       slices.Clone(t.Frameworks),
		CrossTargets:     slices.Clone(t.CrossTargets),
		CrossRecipes:     slices.Clone(t.CrossRecipes),
		Declared:         t.Declared.clone(),
	}
	for i := range c.CrossRecipes {
		c.CrossRecipes[i].DevelImages = slices.Clone(c.CrossRecipes[i].DevelImages)
	}
	for i := range c.SoCs {
		s := &c.SoCs[i]
		s.Aliases, s.JetPacks = slices.Clone(s.Aliases), slices.Clone(s.JetPacks)
		s.ForwardCompat = slices.Clone(s.ForwardCompat)
		s.Unpromised = slices.Clone(s.Unpromised)
		s.CPU.Features = slices.Clone(s.CPU.Features)
		s.Modules = slices.Clone(s.Modules)
		for j := range s.Modules {
			m := &s.Modules[j]
			m.Parts, m.Words = slices.Clone(m.Parts), slices.Clone(m.Words)
		}
	}
	for i := range c.JetPacks {
		r := &c.JetPacks[i]
		r.AlsoL4T, r.Capabilities = slices.Clone(r.AlsoL4T), slices.Clone(r.Capabilities)
		r.DriverDirs = cloneDriverDirs(r.DriverDirs)
	}
	return c
}

// socIndexByCapability finds the SoC whose GPU is c (its capability or an
// alias, ignoring the arch-specific flag); -1 when none.
func (t *Table) socIndexByCapability(c Capability) int {
	for i := range t.SoCs {
		s := &t.SoCs[i]
		if sameSM(s.Capability, c) {
			return i
		}
		for _, a := range s.Aliases {
			if sameSM(a, c) {
				return i
			}
		}
	}
	return -1
}

// sameSM compares major and minor only.
func sameSM(a, b Capability) bool { return a.Major == b.Major && a.Minor == b.Minor }

// SoCByCapability finds the SoC whose integrated GPU has capability c,
// under its canonical capability or an alias (Thor's 10.1).
func (t *Table) SoCByCapability(c Capability) (SoC, bool) {
	if i := t.socIndexByCapability(c); i >= 0 {
		return t.SoCs[i], true
	}
	return SoC{}, false
}

// IsTegra reports whether c is the GPU of a Jetson SoC of the table.
func (t *Table) IsTegra(c Capability) bool { return t.socIndexByCapability(c) >= 0 }

// Canonical returns the capability that names the same GPU for binary
// selection: an alias of a SoC (Thor's 10.1) becomes the SoC's capability,
// keeping the arch-specific flag; anything else is returned unchanged.
func (t *Table) Canonical(c Capability) Capability {
	if i := t.socIndexByCapability(c); i >= 0 {
		s := t.SoCs[i].Capability
		return Capability{Major: s.Major, Minor: s.Minor, ArchSpecific: c.ArchSpecific}
	}
	return c
}

// SoCByID finds the SoC with the decimal /sys/devices/soc0/soc_id value id.
// Ids of SoCs that are not Jetsons, such as 36 for T241 Grace, return false.
func (t *Table) SoCByID(id int) (SoC, bool) {
	for _, s := range t.SoCs {
		if s.SocID == id {
			return s, true
		}
	}
	return SoC{}, false
}

// SoCByCompatible finds the SoC named by one device-tree compatible entry
// such as "nvidia,tegra234"; a bare "tegra234" is accepted too. Spaces and
// NUL bytes around the entry are ignored.
func (t *Table) SoCByCompatible(entry string) (SoC, bool) {
	entry = strings.Trim(entry, " \t\r\n\x00")
	entry = strings.TrimPrefix(entry, "nvidia,")
	for _, s := range t.SoCs {
		if s.Name == entry {
			return s, true
		}
	}
	return SoC{}, false
}

// SoCFromCompatible finds the SoC among the entries of a device tree's
// compatible property (computecap/host.ParseCompatible splits it): the
// first entry that names a SoC of the table. The entries go from the most
// specific to the most general (the Devicetree Specification, section
// 2.3.1, "compatible": https://github.com/devicetree-org/devicetree-specification):
// the board, the module, then the SoC, and after the SoC the older SoCs
// it is compatible with, as Linux's arch/arm64/boot/dts/nvidia/tegra132-norrin.dts
// lists "nvidia,norrin", "nvidia,tegra132", "nvidia,tegra124". The first
// SoC entry is the chip itself, the one /sys/devices/soc0/soc_id names; a
// later one is a chip it can pass for.
func (t *Table) SoCFromCompatible(entries []string) (SoC, bool) {
	for _, entry := range entries {
		if s, ok := t.SoCByCompatible(entry); ok {
			return s, true
		}
	}
	return SoC{}, false
}

// Describe names the GPU of capability c for messages: "Jetson Orin, SM
// 8.7" for a SoC of the table, "GPU with SM 8.6" otherwise.
func (t *Table) Describe(c Capability) string {
	if s, ok := t.SoCByCapability(c); ok {
		return "Jetson " + s.Family + ", SM " + c.String()
	}
	return "GPU with SM " + c.String()
}

// describeParen is Describe with the SM in parentheses: "Jetson Orin (SM 8.7)".
func (t *Table) describeParen(c Capability) string {
	if s, ok := t.SoCByCapability(c); ok {
		return "Jetson " + s.Family + " (SM " + c.String() + ")"
	}
	return "GPU with SM " + c.String()
}

// ModuleClass finds the device class of a module of soc: first by the part
// numbers of the device tree's compatible entries, then by the words of a
// board name (the device-tree model or /sys/devices/soc0/machine). known is
// false when neither matched.
func (s SoC) ModuleClass(compatible []string, boardName string) (class string, known bool) {
	for _, m := range s.Modules {
		for _, e := range compatible {
			for part := range strings.SplitSeq(strings.TrimPrefix(e, "nvidia,"), "+") {
				if partMatches(part, m.Parts) {
					return m.Class, true
				}
			}
		}
	}
	if boardName == "" {
		return "", false
	}
	lower := strings.ToLower(boardName)
	for _, m := range s.Modules {
		all := len(m.Words) > 0
		for _, w := range m.Words {
			all = all && strings.Contains(lower, strings.ToLower(w))
		}
		if all {
			return m.Class, true
		}
	}
	return "", false
}

// partMatches reports whether a compatible part equals one of parts or
// continues it with '-'.
func partMatches(part string, parts []string) bool {
	for _, p := range parts {
		if part == p || strings.HasPrefix(part, p+"-") {
			return true
		}
	}
	return false
}
