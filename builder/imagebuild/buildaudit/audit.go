// Package buildaudit is the build-time audit: which SMs the CUDA code of a
// release's routers and of the libraries they load runs on, judged with
// computecap's rule before any tag.
package buildaudit

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
)

// The build-time audit (`jetbake audit`'s rule, package imageaudit, on
// what a build has at hand) reads the CUDA fat binaries of two kinds of
// file, through ranged reads of the gateway (the headers of each entry,
// never the code): every router binary, before the image is exported, for
// the SM the entrypoint picks it for; and, after the smoke run, every
// library a router's DT_NEEDED resolved to in the runtime image (ldd's
// trace), for every SM target of the release. Other files of the runtime
// image (libraries a router opens with dlopen, Python packages) are not
// read at build time: `jetbake audit` on the pushed image reads them all.
//
// A router must hold, in every fat binary (module: the driver loads each
// as a whole), a cubin that runs on its SM: the build compiled it for that
// SM (CUDA_COMPUTE_CAP), so PTX alone, or a cubin of another SM, in any
// module says it was compiled for the wrong one (a flash-attention module
// that holds only sm_80 is refused). A library, or an app's file, must
// hold code for every target in some module: PTX compiled when loaded
// (JIT) is recorded, and passes; so is partial, some modules with code and
// others with only other GPUs' kernels, as NVIDIA ships its own libraries
// (the file loads, and those kernels fail if launched). Only a file with
// no code for a target in any module is refused.

// Audit is the build-time audit's result for one SM target of a release.
type Audit struct {
	// SM is the target, e.g. "8.7".
	SM string `json:"sm"`
	// Verdict is the worst over the files read for it: "runs", "JIT",
	// "partial" or "no code"; "none" when none of them holds a fat binary.
	Verdict string `json:"verdict"`
	// Files are the files read for it that hold GPU code.
	Files []AuditedFile `json:"files"`
}

// AuditedFile is one file's verdict for one SM target.
type AuditedFile struct {
	// Path is the file's path in the image.
	Path string `json:"path"`
	// Role is "router", "library" or, in an app's image, "file".
	Role string `json:"role"`
	// Code is what its fat binaries hold, each kind and SM once.
	Code []string `json:"code"`
	// Verdict is computecap's JudgeModules': "runs", "JIT", "partial" or
	// "no code".
	Verdict string `json:"verdict"`
	// Reason says why: for "partial", how many modules hold code for the
	// SM and the SMs of those that do not.
	Reason string `json:"reason"`
}

// Roles of an audited file.
const (
	RoleRouter  = "router"
	RoleLibrary = "library"
	// RoleFile is any ELF file of an app's image (its framework's
	// libraries, a wheel's extension modules): judged as a library.
	RoleFile = "file"
)

// Code is what the fat binaries of one file hold, module by module.
type Code struct {
	// Path is the file's path in the image; Role is RoleRouter, RoleLibrary
	// or RoleFile.
	Path, Role string
	modules    [][]computecap.Code
}

// NewCode is the code of the file at path as imageaudit read it, module by
// module (imageaudit.CUDAFile.Modules).
func NewCode(path, role string, modules [][]computecap.Code) Code {
	return Code{Path: path, Role: role, modules: modules}
}

// Read reads the fat binaries of the ELF file r that the CUDA runtime
// loads (.nv_fatbin; never the relocatable copies of __nv_relfatbin), as
// imageaudit does. A file that is not ELF (a script router) is an error
// that IsNotELF reports.
func Read(path, role string, r io.ReaderAt) (Code, error) {
	entries, err := fatbin.ReadELF(r, fatbin.Limits{})
	if err != nil {
		return Code{}, fmt.Errorf("%s: %w", path, err)
	}
	loaded, _ := fatbin.Split(entries)
	c := Code{Path: path, Role: role}
	for _, m := range fatbin.Modules(loaded) {
		var code []computecap.Code
		for _, e := range m {
			if k, ok := e.Code(); ok && !slices.Contains(code, k) {
				code = append(code, k)
			}
		}
		c.modules = append(c.modules, code)
	}
	return c, nil
}

// all is each kind and SM the file holds once, as cuobjdump names them.
func (c Code) all() []string {
	var out []string
	for _, m := range c.modules {
		for _, k := range m {
			if s := k.String(); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// judge is the file's verdict for sm, the worst over its modules
// (computecap's JudgeModules, the rule `jetbake audit` judges with), and
// that module when it fails (nil when none does): a router's module passes
// only with a cubin that runs (see the comment at the top), a library's
// with JIT too.
func (c Code) judge(t *computecap.Table, sm computecap.Capability) (AuditedFile, []computecap.Code) {
	v, i := t.JudgeModules(sm, c.modules)
	f := AuditedFile{Path: c.Path, Role: c.Role, Code: c.all(), Verdict: v.Verdict.String(), Reason: v.Reason}
	pass := v.Verdict == computecap.Runs || (c.Role != RoleRouter && v.Verdict != computecap.NoCode)
	switch {
	case pass:
		return f, nil
	case i < 0:
		// No module holds code for sm: the refusal names all it holds.
		return f, union(c.modules)
	}
	return f, c.modules[i]
}

// union is each kind and SM of modules once.
func union(modules [][]computecap.Code) []computecap.Code {
	var out []computecap.Code
	for _, m := range modules {
		for _, k := range m {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// Release is what the audit judges for and names of a release.
type Release struct {
	// Name and CUDA are the release's name and CUDA version.
	Name, CUDA string
	// SMs are its targets' SMs, in target order.
	SMs []string
}

// judgeSM judges files for the target sm: the routers that serve it, and
// the libraries. It returns the result and, when a file fails, the
// sentence for the first.
func judgeSM(t *computecap.Table, sm computecap.Capability, files []Code, rel Release) (Audit, error) {
	a := Audit{SM: sm.String(), Verdict: matrix.AuditNone, Files: []AuditedFile{}}
	var firstErr error
	worst := computecap.Runs
	for _, c := range files {
		if len(c.modules) == 0 {
			continue
		}
		f, bad := c.judge(t, sm)
		a.Files = append(a.Files, f)
		worst = min(worst, verdictOf(f.Verdict))
		a.Verdict = worst.String()
		if bad != nil && firstErr == nil {
			firstErr = refusal(t, sm, c, bad, rel)
		}
	}
	return a, firstErr
}

func verdictOf(s string) computecap.Verdict {
	v, _ := computecap.ParseVerdict(s)
	return v
}

// refusal is the sentence that fails the release: the file, what the
// module that fails holds, the target, and the fix.
func refusal(t *computecap.Table, sm computecap.Capability, c Code, bad []computecap.Code, rel Release) error {
	names := make([]string, len(bad))
	for i, k := range bad {
		names[i] = k.String()
	}
	holds := strings.Join(names, " and ")
	if c.Role == RoleRouter {
		return fmt.Errorf("audit: %s holds %s in one of its CUDA fat binaries and no cubin for %s, the SM release %s builds it for: "+
			"it was compiled for another SM; compile it with CUDA_COMPUTE_CAP=%s (jetbake passes each target's; check that the Dockerfile and the build arguments do not set another)",
			c.Path, holds, t.Describe(sm), rel.Name, sm.Digits())
	}
	if c.Role == RoleFile {
		return fmt.Errorf("audit: %s holds %s in one of its CUDA fat binaries and no code for %s, an SM target of release %s: "+
			"it was built for other GPUs (a PyPI or SBSA wheel is not built for Jetson); install a build for Jetson instead "+
			"(built for compute capability %s, on the device or from a Jetson index such as jetson-ai-lab's), or leave the package out of the image",
			c.Path, holds, t.Describe(sm), rel.Name, sm.Digits())
	}
	return fmt.Errorf("audit: %s, a library the routers load, holds %s in one of its CUDA fat binaries and no code for %s, an SM target of release %s: "+
		"install CUDA %s's libraries built for Jetson (NVIDIA's JetPack repository, not an SBSA or x86 build) in the runtime stage",
		c.Path, holds, t.Describe(sm), rel.Name, rel.CUDA)
}

// Judge judges, for every target, its router (routers[i], when read) and
// the libraries, and returns the audits with the sentence of the first
// file that fails.
func (r Release) Judge(t *computecap.Table, routers, libraries []Code) ([]Audit, error) {
	var out []Audit
	var firstErr error
	for i, s := range r.SMs {
		sm, err := computecap.Parse(s)
		if err != nil {
			return nil, err
		}
		var files []Code
		if i < len(routers) {
			files = append(files, routers[i])
		}
		a, err := judgeSM(t, sm, append(files, libraries...), r)
		out = append(out, a)
		if firstErr == nil {
			firstErr = err
		}
	}
	return out, firstErr
}

// Annotation is the value of the annotation that says the routers'
// verdicts, each for its own SM ("8.7=runs,11.0=runs"), or the sentence of
// the first router that fails.
func (r Release) Annotation(t *computecap.Table, routers []Code) (string, error) {
	var parts []string
	for i, s := range r.SMs {
		sm, err := computecap.Parse(s)
		if err != nil {
			return "", err
		}
		a, err := judgeSM(t, sm, routers[i:i+1], r)
		if err != nil {
			return "", err
		}
		parts = append(parts, a.SM+"="+a.Verdict)
	}
	return strings.Join(parts, ","), nil
}

// IsNotELF reports an error of a file that is not ELF (a script router):
// it holds no fat binary to judge.
func IsNotELF(err error) bool { return errors.Is(err, fatbin.ErrNotELF) }
