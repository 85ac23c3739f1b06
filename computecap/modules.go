package computecap

import (
	"slices"
	"strconv"
	"strings"
)

// JudgeModules says whether a GPU runs a file whose code comes in modules
// (one fat binary each, as the linker put them in the file). The driver
// loads each module as a whole, and a module without code for the GPU
// does not stop the file from loading: only its kernels fail, when
// launched. So the file's verdict is:
//   - every module has code: the worst of theirs, runs or JIT; module is
//     that worst module's index (the first of them);
//   - no module has code: NoCode, module -1, the reason saying what the
//     file holds;
//   - some modules have code and the others hold only other GPUs' kernels:
//     Partial, module the first without code, the reason counting both and
//     naming the SMs of those without code.
//
// A file without modules is no code, module -1. Both `jetbake audit` and
// the build-time audit judge files with it; what each does with Partial
// (warn, or refuse a router) is theirs to say.
func (t *Table) JudgeModules(gpu Capability, modules [][]Code) (v CodeVerdict, module int) {
	if len(modules) == 0 {
		return t.JudgeCode(gpu, nil), -1
	}
	var worst CodeVerdict
	worstAt, missingAt := -1, -1
	var without [][]Code
	var unpromised []UnpromisedCode
	for i, m := range modules {
		mv := t.JudgeCode(gpu, m)
		if mv.Verdict == NoCode {
			if missingAt < 0 {
				missingAt = i
			}
			without = append(without, m)
			for _, u := range mv.Unpromised {
				if !slices.Contains(unpromised, u) {
					unpromised = append(unpromised, u)
				}
			}
			continue
		}
		if worstAt < 0 || mv.Verdict < worst.Verdict {
			worst, worstAt = mv, i
		}
	}
	switch {
	case worstAt < 0:
		v = t.JudgeCode(gpu, union(modules))
		if len(modules) > 1 {
			v.Reason = "none of its " + strconv.Itoa(len(modules)) + " fat binaries holds code for it: " + v.Reason
		}
		v.Modules = len(modules)
		return v, -1
	case missingAt < 0:
		worst.Modules, worst.WithCode = len(modules), len(modules)
		return worst, worstAt
	}
	withCode := len(modules) - len(without)
	return CodeVerdict{Verdict: Partial, By: worst.By, Unpromised: unpromised, Modules: len(modules), WithCode: withCode,
		Reason: t.partialReason(gpu, modules, without)}, missingAt
}

// partialReason counts the modules with and without code for gpu, and
// names what those with code run and the SMs of the others: "188 of 225
// fat binaries hold code for GPU with SM 9.0 (sm_90); 37 hold only sm_35,
// sm_60 and sm_61 kernels, which fail if launched on this GPU (...)".
func (t *Table) partialReason(gpu Capability, modules, without [][]Code) string {
	var by []string
	for _, m := range modules {
		mv := t.JudgeCode(gpu, m)
		if mv.Verdict == NoCode {
			continue
		}
		name := mv.By.Target.SM()
		if mv.By.Kind == PTX {
			name = "compute_" + mv.By.Target.Digits() + " PTX (JIT)"
		}
		if !slices.Contains(by, name) {
			by = append(by, name)
		}
	}
	withCode := len(modules) - len(without)
	return strconv.Itoa(withCode) + " of " + strconv.Itoa(len(modules)) + " fat binaries hold code for " + t.Describe(gpu) +
		" (" + strings.Join(by, " or ") + "); " + strconv.Itoa(len(without)) + " hold only " + kernels(union(without)) +
		", which fail if launched on this GPU (\"no kernel image is available for execution on the device\")"
}

// kernels names the SMs code is for, oldest first, as cuobjdump does:
// "sm_35, sm_60 and compute_61 kernels"; "no kernels" for none.
func kernels(code []Code) string {
	slices.SortFunc(code, func(a, b Code) int {
		if c := a.Target.Compare(b.Target); c != 0 {
			return c
		}
		return int(a.Kind) - int(b.Kind)
	})
	var names []string
	for _, c := range code {
		n := c.Target.SM()
		if c.Kind == PTX {
			n = "compute_" + c.Target.Digits()
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "no kernels"
	case 1:
		return names[0] + " kernels"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " kernels"
}

// union is each piece of code of modules once, in order.
func union(modules [][]Code) []Code {
	var out []Code
	for _, m := range modules {
		for _, c := range m {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}
