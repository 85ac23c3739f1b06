// Package imageaudit tells, from the CUDA code inside an image, which GPUs
// can run it: it reads each layer of the image once, looks at the ELF
// files only, reads their CUDA fat binaries (package fatbin) and judges
// each file for each GPU with computecap's rule, the one `jetbake compat`
// answers with. It works on any image, built by jetbake or not: a
// reference in a registry, an OCI layout or a Docker tarball; and on files
// before they are in an image: one ELF file, or a folder of them.
package imageaudit

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// Report is the audit of one image for some GPUs.
type Report struct {
	// Image is the IMAGE audited.
	Image string `json:"image"`
	// GPUs are the GPUs it was audited for.
	GPUs []computecap.Capability `json:"gpus"`
	// Files are its CUDA files, by path.
	Files []FileReport `json:"files"`
	// PerGPU is the worst verdict over the files, for each GPU.
	PerGPU []GPUResult `json:"per_gpu"`
	// ELFs is how many ELF files were read, Bytes the file content seen.
	ELFs  int   `json:"elf_files"`
	Bytes int64 `json:"bytes"`
	// Skipped are ELF files not read, with why.
	Skipped []string `json:"skipped,omitempty"`
	// RelocatableOnly are the ELF files whose only fat binaries are
	// relocatable copies (__nv_relfatbin), which the CUDA runtime never
	// loads: not judged.
	RelocatableOnly []RelocatableCode `json:"relocatable_only,omitempty"`
	// OK is true when every CUDA file holds code for every GPU (JIT
	// included) in at least one of its fat binaries: no file is "no code".
	// A partial file (some fat binaries hold only other GPUs' kernels)
	// keeps OK, and sets Partial.
	OK bool `json:"ok"`
	// Partial is true when some file is partial for some GPU: it loads,
	// and the kernels of its fat binaries without code fail if launched.
	// `jetbake audit --strict` fails on it.
	Partial bool `json:"partial"`
	// Sentence says it in one sentence, with the fix when not OK.
	Sentence string `json:"sentence"`
}

// FileReport is one CUDA file and its verdict for each GPU.
type FileReport struct {
	Path   string   `json:"path"`
	Cubins []string `json:"cubins"`
	PTX    []string `json:"ptx"`
	Error  string   `json:"error,omitempty"`
	// Modules is how many fat binaries (modules) it holds: a GPU runs the
	// file only when every module has code for it.
	Modules  int          `json:"modules"`
	Verdicts []GPUVerdict `json:"verdicts"`
	// Relocatable is what its __nv_relfatbin section holds, apart from the
	// modules: never loaded, never judged.
	Relocatable *RelocatableCode `json:"relocatable,omitempty"`
}

// RelocatableCode is what a file's __nv_relfatbin section holds: copies of
// relocatable device code that nvlink reads when a program device-links
// against the file. The CUDA runtime never loads them (cuobjdump lists
// them only with --all-fatbin), so they are reported, not judged.
type RelocatableCode struct {
	// Path is the file's, in Report.RelocatableOnly; empty in a FileReport.
	Path string `json:"path,omitempty"`
	// Modules is how many fat binaries the section holds.
	Modules int      `json:"modules"`
	Cubins  []string `json:"cubins"`
	PTX     []string `json:"ptx"`
}

// relocatable is what f's __nv_relfatbin holds; nil when it has none.
func relocatable(f CUDAFile) *RelocatableCode {
	if len(f.Relocatable) == 0 {
		return nil
	}
	var all []computecap.Code
	for _, m := range f.Relocatable {
		for _, c := range m {
			if !slices.Contains(all, c) {
				all = append(all, c)
			}
		}
	}
	rc := &RelocatableCode{Modules: len(f.Relocatable)}
	rc.Cubins, rc.PTX = names(sortedCode(all))
	return rc
}

// sortedCode sorts code as the scan does: cubins first, by SM.
func sortedCode(code []computecap.Code) []computecap.Code {
	slices.SortFunc(code, func(a, b computecap.Code) int {
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		return a.Target.Compare(b.Target)
	})
	return code
}

// GPUVerdict is one file's verdict for one GPU.
type GPUVerdict struct {
	GPU     computecap.Capability `json:"gpu"`
	Verdict computecap.Verdict    `json:"verdict"`
	By      string                `json:"by,omitempty"`
	Reason  string                `json:"reason"`
	// Unpromised lists cubins reported to run on this GPU although NVIDIA
	// does not promise it, with the report; they do not count.
	Unpromised []string `json:"unpromised,omitempty"`
	// Module, in a file of several fat binaries, is the one (from 1) the
	// verdict comes from: the worst when it is JIT, the first without code
	// when it is partial; ModuleCubins and ModulePTX are what that module
	// holds. 0 otherwise, and when no module holds code for the GPU.
	Module int `json:"module,omitempty"`
	// ModulesWithCode, in a file of several fat binaries, is how many hold
	// code for the GPU.
	ModulesWithCode int      `json:"modules_with_code,omitempty"`
	ModuleCubins    []string `json:"module_cubins,omitempty"`
	ModulePTX       []string `json:"module_ptx,omitempty"`
}

// GPUResult is the worst verdict over an image's files for one GPU.
type GPUResult struct {
	GPU     computecap.Capability `json:"gpu"`
	Verdict computecap.Verdict    `json:"verdict"`
	// NoCode are the files without code for it.
	NoCode []string `json:"no_code,omitempty"`
	// Partial are the files that hold code for it in some of their fat
	// binaries and only other GPUs' kernels in the others.
	Partial []string `json:"partial,omitempty"`
}

// Audit reads im's layers once (or its ELF file, or the files under its
// folder) and judges each CUDA file for each GPU.
func Audit(ctx context.Context, im *Opened, gpus []computecap.Capability, opts ...Option) (*Report, error) {
	var scan *Scan
	var err error
	if im.Source == SourceImage {
		scan, err = ScanImage(ctx, im.Image, opts...)
	} else {
		scan, err = scanLocal(ctx, im, newOptions(opts))
	}
	if err != nil {
		return nil, err
	}
	return Judge(im.Name, scan, gpus, opts...), nil
}

// Judge makes the report of a scan for gpus.
func Judge(image string, scan *Scan, gpus []computecap.Capability, opts ...Option) *Report {
	o := newOptions(opts)
	r := &Report{Image: image, GPUs: gpus, ELFs: scan.ELFs, Bytes: scan.Bytes, Skipped: scan.Skipped, Files: []FileReport{}}
	for _, g := range gpus {
		r.PerGPU = append(r.PerGPU, GPUResult{GPU: g, Verdict: computecap.Runs})
	}
	for _, f := range scan.Files {
		r.Files = append(r.Files, r.judgeFile(f, scan.Routers, o))
	}
	for _, f := range scan.RelocatableOnly {
		rc := relocatable(f)
		rc.Path = f.Path
		r.RelocatableOnly = append(r.RelocatableOnly, *rc)
	}
	r.OK = true
	for _, g := range r.PerGPU {
		r.OK = r.OK && g.Verdict != computecap.NoCode
		r.Partial = r.Partial || len(g.Partial) > 0
	}
	r.Sentence = r.sentence(o.table)
	return r
}

func (r *Report) judgeFile(f CUDAFile, routers map[string]computecap.Capability, o options) FileReport {
	fr := FileReport{Path: f.Path, Modules: len(f.Modules), Relocatable: relocatable(f)}
	fr.Cubins, fr.PTX = names(f.Code)
	serves := r.GPUs
	if sm, ok := routers[f.Path]; ok {
		serves = routerServes(o.table, sm, routers, r.GPUs)
	}
	if o.gpusFor != nil {
		serves = o.gpusFor(f.Path, serves)
	}
	if f.Err != nil {
		fr.Error = f.Path + ": " + f.Err.Error()
	}
	for i, g := range r.GPUs {
		if !slices.Contains(serves, g) {
			continue
		}
		v := GPUVerdict{GPU: g, Verdict: computecap.NoCode, Reason: fr.Error}
		if f.Err == nil {
			v = judgeModules(o.table, g, f.Modules)
		}
		fr.Verdicts = append(fr.Verdicts, v)
		res := &r.PerGPU[i]
		res.Verdict = min(res.Verdict, v.Verdict)
		switch v.Verdict {
		case computecap.NoCode:
			res.NoCode = append(res.NoCode, f.Path)
		case computecap.Partial:
			res.Partial = append(res.Partial, f.Path)
		}
	}
	return fr
}

// judgeModules is a file's verdict for g by computecap's JudgeModules (the
// rule the build-time audit judges with): naming, when the file has several
// modules and does not run, the module the verdict comes from.
func judgeModules(t *computecap.Table, g computecap.Capability, modules [][]computecap.Code) GPUVerdict {
	cv, m := t.JudgeModules(g, modules)
	v := GPUVerdict{GPU: g, Verdict: cv.Verdict, Reason: cv.Reason}
	if cv.Verdict != computecap.NoCode {
		v.By = cv.By.String()
	}
	for _, u := range cv.Unpromised {
		v.Unpromised = append(v.Unpromised, u.Compiled.SM()+" cubin ("+u.Source+")")
	}
	if len(modules) > 1 {
		v.ModulesWithCode = cv.WithCode
	}
	if len(modules) > 1 && cv.Verdict != computecap.Runs && m >= 0 {
		v.Module = m + 1
		v.ModuleCubins, v.ModulePTX = names(modules[m])
	}
	return v
}

// names are code's cubins and PTX as cuobjdump names them: "sm_87",
// "compute_87".
func names(code []computecap.Code) (cubins, ptx []string) {
	cubins, ptx = []string{}, []string{}
	for _, c := range code {
		if c.Kind == computecap.PTX {
			ptx = append(ptx, "compute_"+c.Target.Digits())
		} else {
			cubins = append(cubins, c.Target.SM())
		}
	}
	return cubins, ptx
}

// routerServes are the GPUs among gpus for which a jetbake image's
// entrypoint picks the router built for sm: a router binary must hold code
// for those only.
func routerServes(t *computecap.Table, sm computecap.Capability, routers map[string]computecap.Capability, gpus []computecap.Capability) []computecap.Capability {
	targets := make([]computecap.Capability, 0, len(routers))
	for _, c := range routers {
		targets = append(targets, c)
	}
	var out []computecap.Capability
	for _, g := range gpus {
		if picked, err := t.Pick(g, targets); err == nil && picked == sm {
			out = append(out, g)
		}
	}
	return out
}

// Verdict is the file's verdict for gpu, and whether it was judged for it.
func (f FileReport) Verdict(gpu computecap.Capability) (GPUVerdict, bool) {
	for _, v := range f.Verdicts {
		if v.GPU == gpu {
			return v, true
		}
	}
	return GPUVerdict{}, false
}

// sentence is the report's last sentence.
func (r *Report) sentence(t *computecap.Table) string {
	names := make([]string, len(r.GPUs))
	for i, g := range r.GPUs {
		names[i] = t.Describe(g)
	}
	if len(r.Files) == 0 {
		return "no ELF file of " + r.Image + " holds CUDA code (" + plural(r.ELFs, "ELF file") + " read): nothing there needs a GPU"
	}
	if r.OK && !r.Partial {
		s := "every CUDA file of " + r.Image + " (" + plural(len(r.Files), "file") + ") runs on " + strings.Join(names, " and ")
		if jit := r.jitCount(); jit > 0 {
			s += "; " + plural(jit, "verdict") + " rely on PTX compiled when loaded (JIT): a slower first start"
		}
		return s
	}
	if r.OK {
		return "every CUDA file of " + r.Image + " (" + plural(len(r.Files), "file") + ") holds code for " + strings.Join(names, " and ") +
			", but not in all its fat binaries: " + r.partialParts(t) + "; the image loads, and those kernels fail if launched " +
			"(jetbake audit --strict fails on it)"
	}
	var parts []string
	for _, g := range r.PerGPU {
		if len(g.NoCode) == 0 {
			continue
		}
		f := r.file(g.NoCode[0])
		part := t.Describe(g.GPU) + ": " + plural(len(g.NoCode), "file") + " without code for it, such as " + f.Path + " (" + f.holdsFor(g.GPU) + ")"
		parts = append(parts, part)
	}
	if r.Partial {
		parts = append(parts, "and partial, "+r.partialParts(t))
	}
	return r.Image + " cannot run everywhere it should: " + strings.Join(parts, "; ") +
		"; fix: rebuild those files for the missing SM (nvcc -gencode arch=compute_XY,code=sm_XY, CUDA_COMPUTE_CAP=XY for a router), " +
		"or install a build made for Jetson (a JetPack wheel index such as jetson-ai-lab, not an SBSA or PyPI one)"
}

// partialParts names, per GPU, the partial files and the first's reason:
// "GPU with SM 9.0: 1 file, /usr/lib/libcublas.so.11 (188 of 225 ...)".
func (r *Report) partialParts(t *computecap.Table) string {
	var parts []string
	for _, g := range r.PerGPU {
		if len(g.Partial) == 0 {
			continue
		}
		f := r.file(g.Partial[0])
		v, _ := f.Verdict(g.GPU)
		part := t.Describe(g.GPU) + ": " + plural(len(g.Partial), "file") + ", such as " + f.Path + " (" + v.Reason + ")"
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

func (r *Report) jitCount() int {
	n := 0
	for _, f := range r.Files {
		for _, v := range f.Verdicts {
			if v.Verdict == computecap.JIT {
				n++
			}
		}
	}
	return n
}

func (r *Report) file(path string) FileReport {
	for _, f := range r.Files {
		if f.Path == path {
			return f
		}
	}
	return FileReport{Path: path}
}

// holds says what a file holds: "it holds sm_75, sm_80 cubins and
// compute_90 PTX".
func (f FileReport) holds() string {
	if f.Error != "" {
		return "its fat binary cannot be read"
	}
	return "it holds " + held(f.Cubins, f.PTX)
}

// holdsFor says what the file holds that gpu's verdict comes from: the
// module's code when it names one ("its fat binary 2 of 3 holds sm_75
// cubins"), else the file's.
func (f FileReport) holdsFor(gpu computecap.Capability) string {
	v, ok := f.Verdict(gpu)
	if !ok || v.Module == 0 || f.Error != "" {
		return f.holds()
	}
	return v.module(f) + " holds " + held(v.ModuleCubins, v.ModulePTX)
}

// module names the verdict's module: "its fat binary 2 of 3".
func (v GPUVerdict) module(f FileReport) string {
	return "its fat binary " + strconv.Itoa(v.Module) + " of " + strconv.Itoa(f.Modules)
}

func held(cubins, ptx []string) string {
	var parts []string
	if len(cubins) > 0 {
		parts = append(parts, strings.Join(cubins, ", ")+" cubins")
	}
	if len(ptx) > 0 {
		parts = append(parts, strings.Join(ptx, ", ")+" PTX")
	}
	return strings.Join(parts, " and ")
}

func plural(n int, what string) string {
	s := strconv.Itoa(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}
