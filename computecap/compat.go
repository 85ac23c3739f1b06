package computecap

import (
	"slices"
	"strings"
)

// RunsOn reports whether a binary compiled for compiled runs on a GPU of
// compute capability gpu, with a one-line reason. The rules, from the CUDA
// programming guide:
//
//   - a binary built for the GPU's own SM runs; Thor's 10.1 and 11.0 are the
//     same GPU;
//   - arch-specific code (sm_90a) runs only on that exact SM;
//   - a Tegra GPU runs only code built for its own SM, and code built for a
//     Tegra SM runs on no other GPU: binary compatibility across minor
//     versions holds on desktop GPUs only (an Orin, 8.7, does not run sm_80
//     code, whatever text-embeddings-inference's table says);
//   - a desktop GPU X.Z runs code built for X.Y when Z >= Y.
//
// The arch-specific flag of gpu is ignored: a GPU reports a plain version.
// Invalid capabilities (see Capability.Valid) never run.
func RunsOn(compiled, gpu Capability) (bool, string) {
	return defaultTable.RunsOn(compiled, gpu)
}

// RunsOn is the package's RunsOn with the Tegra GPUs of t.
func (t *Table) RunsOn(compiled, gpu Capability) (bool, string) {
	v := t.verdictFor(compiled, gpu)
	return v.runs(), t.reason(v, compiled, gpu)
}

// verdict is the rule of RunsOn that decided a pair; the reason text is only
// built when asked for, so that Pick does not allocate.
type verdict int

const (
	invalidCompiled verdict = iota
	invalidGPU
	exactArchSpecific
	exactSM
	thorAlias
	archSpecificElsewhere
	tegraGPU
	tegraCode
	otherMajor
	newerMinor
	olderMinor
)

func (v verdict) runs() bool {
	switch v {
	case exactArchSpecific, exactSM, thorAlias, olderMinor:
		return true
	default:
		return false
	}
}

func (t *Table) verdictFor(compiled, gpu Capability) verdict {
	if !compiled.Valid() {
		return invalidCompiled
	}
	if !gpu.Valid() {
		return invalidGPU
	}
	cc, cg := t.Canonical(compiled), t.Canonical(gpu)
	sameSM := cc.Major == cg.Major && cc.Minor == cg.Minor
	switch {
	case sameSM && compiled.ArchSpecific:
		return exactArchSpecific
	case sameSM && compiled.Major == gpu.Major && compiled.Minor == gpu.Minor:
		return exactSM
	case sameSM:
		return thorAlias
	case compiled.ArchSpecific:
		return archSpecificElsewhere
	case t.IsTegra(cg):
		return tegraGPU
	case t.IsTegra(cc):
		return tegraCode
	case cc.Major != cg.Major:
		return otherMajor
	case cc.Minor > cg.Minor:
		return newerMinor
	default:
		return olderMinor
	}
}

func (t *Table) reason(v verdict, compiled, gpu Capability) string {
	gpu.ArchSpecific = false
	code := compiled.SM() + " code"
	on := " on SM " + gpu.String()
	switch v {
	case invalidCompiled:
		return "the compiled target " + compiled.String() + " is not a valid compute capability"
	case invalidGPU:
		return "the GPU's compute capability " + gpu.String() + " is not valid"
	case exactArchSpecific:
		return "arch-specific " + code + " runs" + on + ", the exact SM it was built for"
	case exactSM:
		return code + " is built for this GPU's own SM " + gpu.String()
	case thorAlias:
		return code + " runs" + on + ": Thor reports 10.1 or 11.0 depending on its driver, and both are the same GPU"
	case archSpecificElsewhere:
		return "arch-specific " + code + " runs only on SM " +
			Capability{Major: compiled.Major, Minor: compiled.Minor}.String() + ", not" + on
	case tegraGPU:
		return code + " does not run on " + t.Describe(gpu) +
			": Tegra GPUs run only code built for their own SM (binary compatibility across minor versions is desktop-only)"
	case tegraCode:
		return code + " does not run" + on + ": code built for a Tegra SM runs only on that Tegra GPU, never on desktop GPUs"
	case otherMajor:
		return code + " does not run" + on + ": binary compatibility holds only within one major version"
	case newerMinor:
		return code + " does not run" + on + ": a GPU runs only code built for its own or an older minor version"
	default:
		return code + " runs" + on + ": desktop GPUs run code built for an older minor version of the same major"
	}
}

// Pick chooses the binary to run on gpu among the image's targets: a target
// built for exactly this capability first (the arch-specific one when both
// 9.0 and 9.0a are present), then one built for the same GPU under its other
// name (Thor's 10.1 and 11.0), and otherwise the compatible target with the
// highest capability. It returns a *NoBinaryError when no target runs on gpu.
func Pick(gpu Capability, targets []Capability) (Capability, error) {
	return defaultTable.Pick(gpu, targets)
}

// Pick is the package's Pick with the Tegra GPUs of t.
func (t *Table) Pick(gpu Capability, targets []Capability) (Capability, error) {
	gpu.ArchSpecific = false
	best, bestRank := Capability{}, 0
	for _, c := range targets {
		if !t.verdictFor(c, gpu).runs() {
			continue
		}
		rank := 1
		switch {
		case c.Major == gpu.Major && c.Minor == gpu.Minor:
			rank = 3
		case sameSM(t.Canonical(c), t.Canonical(gpu)):
			rank = 2
		}
		if rank > bestRank || (rank == bestRank && best.Less(c)) {
			best, bestRank = c, rank
		}
	}
	if bestRank == 0 {
		return Capability{}, &NoBinaryError{GPU: gpu, Available: slices.Clone(targets), table: t}
	}
	return best, nil
}

// NoBinaryError reports that an image holds no binary that runs on a GPU.
type NoBinaryError struct {
	// GPU is the capability of the GPU found at run time.
	GPU Capability
	// Available lists the targets the image holds.
	Available []Capability
	// table names the GPU; the shipped table when nil.
	table *Table
}

// Error names the GPU and the targets the image holds, such as
// "no binary for Jetson Orin (SM 8.7) in this image: it holds sm_80, sm_90".
func (e *NoBinaryError) Error() string {
	var b strings.Builder
	b.WriteString("no binary for ")
	t := e.table
	if t == nil {
		t = defaultTable
	}
	b.WriteString(t.describeParen(e.GPU))
	b.WriteString(" in this image: ")
	if len(e.Available) == 0 {
		b.WriteString("it holds none")
		return b.String()
	}
	b.WriteString("it holds ")
	sorted := slices.Clone(e.Available)
	slices.SortFunc(sorted, Capability.Compare)
	for i, c := range sorted {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.SM())
	}
	return b.String()
}
