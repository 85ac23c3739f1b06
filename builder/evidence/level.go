package evidence

import (
	"strings"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// Level is how far a piece of evidence proves its image on a Jetson. Each
// level holds the ones before it.
type Level string

// The levels, from none to what the tier "supported" needs.
const (
	// LevelNone: the result is not a pass.
	LevelNone Level = "none"
	// LevelSmoke: every check passed, and the router ran its smoke
	// arguments (--version), which never touch CUDA: the image starts.
	LevelSmoke Level = "smoke"
	// LevelKernel: a CUDA kernel, JIT-compiled by the host's driver, also
	// ran exact on the GPU (the cuda-kernel check).
	LevelKernel Level = "cuda-kernel"
	// LevelServe: the router also served finite embeddings of the model's
	// size (the serve check): TEI's compute-cap gate and its kernels
	// passed. This is what "supported" needs.
	LevelServe Level = "serve"
)

// SupportedLevel is the level a release of the tier "supported" needs.
const SupportedLevel = LevelServe

// LevelOf is the level ev reached.
func LevelOf(ev *Evidence) Level {
	if !ev.Result.Pass {
		return LevelNone
	}
	kernel, serve := ev.passed(evidencespec.CheckCUDAKernel), ev.passed(evidencespec.CheckServe)
	switch {
	case kernel && serve:
		return LevelServe
	case kernel:
		return LevelKernel
	}
	return LevelSmoke
}

// passed reports whether the check of that name is there and passed.
func (ev *Evidence) passed(name string) bool {
	for _, c := range ev.Result.Checks {
		if c.Name == name {
			return c.Status == Passed
		}
	}
	return false
}

// Missing names the checks ev lacks for SupportedLevel, such as "no
// serve check"; empty when it has them.
func Missing(ev *Evidence) string {
	var out []string
	for _, name := range []string{evidencespec.CheckCUDAKernel, evidencespec.CheckServe} {
		if !ev.passed(name) {
			out = append(out, "no passing "+name+" check")
		}
	}
	return strings.Join(out, ", ")
}

// LevelText says in words what the level proves.
func LevelText(l Level) string {
	switch l {
	case LevelSmoke:
		return "the image starts on the Jetson (no CUDA work was checked)"
	case LevelKernel:
		return "a CUDA kernel ran on the GPU; the router did not serve"
	case LevelServe:
		return "a CUDA kernel ran and the router served embeddings: enough for supported"
	}
	return "not a pass"
}
