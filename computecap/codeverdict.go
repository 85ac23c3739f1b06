package computecap

import (
	"slices"
	"strings"
)

// CodeKind is the kind of GPU code a file holds.
type CodeKind int

// The kinds of GPU code.
const (
	// Cubin is machine code for one SM.
	Cubin CodeKind = iota + 1
	// PTX is code the driver compiles for the GPU when it loads it (JIT).
	PTX
)

// Code is one piece of GPU code a file holds: a cubin or PTX, for an SM.
type Code struct {
	Kind   CodeKind
	Target Capability
}

// String names the code as cuobjdump does: "sm_87 cubin", "compute_87 PTX".
func (c Code) String() string {
	if c.Kind == PTX {
		return "compute_" + c.Target.Digits() + " PTX"
	}
	return c.Target.SM() + " cubin"
}

// Verdict says whether a GPU can run a file's code.
type Verdict int

// The verdicts, worst first.
const (
	// NoCode: the file holds no code the GPU runs.
	NoCode Verdict = iota
	// Partial: some of the file's modules hold code the GPU runs, and the
	// others only other GPUs' kernels. The CUDA runtime loads such a file
	// (NVIDIA's own libraries ship per-GPU modules); a kernel of a module
	// without code fails when launched ("no kernel image is available for
	// execution on the device").
	Partial
	// JIT: no cubin runs, but PTX compiles for the GPU when loaded (slower
	// first start, and the driver must know the PTX's version).
	JIT
	// Runs: a cubin runs on the GPU.
	Runs
)

// String is the verdict's word in tables: "runs", "JIT", "partial", "no code".
func (v Verdict) String() string {
	switch v {
	case Runs:
		return "runs"
	case JIT:
		return "JIT"
	case Partial:
		return "partial"
	}
	return "no code"
}

// Verdicts are the verdicts, worst first.
func Verdicts() []Verdict { return []Verdict{NoCode, Partial, JIT, Runs} }

// ParseVerdict reads a verdict's word; ok is false for any other string.
func ParseVerdict(s string) (v Verdict, ok bool) {
	for _, v := range Verdicts() {
		if v.String() == s {
			return v, true
		}
	}
	return NoCode, false
}

// MarshalText writes the verdict's word, for JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// CodeVerdict is the answer of Judge for one GPU and one file's code.
type CodeVerdict struct {
	Verdict Verdict
	// By is the code that runs or compiles; zero for NoCode.
	By Code
	// Reason says why, in one line.
	Reason string
	// Unpromised are the cubins that were reported to run on this GPU
	// although NVIDIA does not promise it (sm_80 on an Orin), with the
	// report; they do not count.
	Unpromised []UnpromisedCode
	// Modules is how many modules JudgeModules judged, and WithCode how
	// many of them hold code for the GPU; both 0 from JudgeCode.
	Modules, WithCode int
}

// JudgeCode says whether a GPU runs a file that holds code; see Table.JudgeCode.
func JudgeCode(gpu Capability, code []Code) CodeVerdict { return defaultTable.JudgeCode(gpu, code) }

// JudgeCode says whether a GPU of capability gpu runs a file that holds
// code, by the rule of RunsOn (the one `jetbake compat` answers with) for
// cubins, and the CUDA guide's rule for PTX: PTX compiles (JIT) on a GPU
// of the same or a newer compute capability, arch-specific PTX only on its
// own SM. A cubin wins over PTX; among cubins, one for the GPU's own SM.
// Cubins of a SoC's Unpromised rows count as no code; the verdict lists them.
func (t *Table) JudgeCode(gpu Capability, code []Code) CodeVerdict {
	gpu.ArchSpecific = false
	var cubins []Capability
	for _, c := range code {
		if c.Kind == Cubin {
			cubins = append(cubins, c.Target)
		}
	}
	if best, err := t.Pick(gpu, cubins); err == nil {
		_, why := t.RunsOn(best, gpu)
		return CodeVerdict{Verdict: Runs, By: Code{Kind: Cubin, Target: best}, Reason: why}
	}
	if ptx, ok := t.bestPTX(gpu, code); ok {
		return CodeVerdict{Verdict: JIT, By: ptx, Reason: ptx.String() + " compiles for " + t.Describe(gpu) +
			" when loaded: PTX runs on its own and newer compute capabilities"}
	}
	v := CodeVerdict{Reason: t.noCodeReason(gpu, code)}
	if s, ok := t.SoCByCapability(gpu); ok {
		for _, u := range s.Unpromised {
			if slices.Contains(cubins, u.Compiled) {
				v.Unpromised = append(v.Unpromised, u)
			}
		}
	}
	return v
}

// bestPTX is the newest PTX that compiles for gpu.
func (t *Table) bestPTX(gpu Capability, code []Code) (Code, bool) {
	g := t.Canonical(gpu)
	var best Code
	found := false
	for _, c := range code {
		if c.Kind != PTX || !c.Target.Valid() {
			continue
		}
		p := t.Canonical(c.Target)
		if p.ArchSpecific && (p.Major != g.Major || p.Minor != g.Minor) {
			continue
		}
		if p.Major > g.Major || (p.Major == g.Major && p.Minor > g.Minor) {
			continue
		}
		if !found || best.Target.Less(c.Target) {
			best, found = c, true
		}
	}
	return best, found
}

// noCodeReason says what the file holds and why none of it serves gpu.
func (t *Table) noCodeReason(gpu Capability, code []Code) string {
	if len(code) == 0 {
		return "the file holds no GPU code"
	}
	held := make([]string, 0, len(code))
	for _, c := range code {
		if s := c.String(); !slices.Contains(held, s) {
			held = append(held, s)
		}
	}
	why := "no cubin for its SM and no PTX for it or an older compute capability"
	if t.IsTegra(gpu) {
		why = "a Jetson runs only cubins built for its own SM, or PTX for it or an older compute capability"
	}
	return "no code for " + t.Describe(gpu) + ": the file holds " + strings.Join(held, ", ") + "; " + why
}
