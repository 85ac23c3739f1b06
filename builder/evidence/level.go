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
	// LevelApp: for an app image (image.kind "app"), the app check also
	// passed: its python imported torch, found CUDA and the Jetson's GPU,
	// and a CUDA matrix product was finite. This is what "supported"
	// needs of an app, which has no router to serve.
	LevelApp Level = "app"
)

// SupportedLevel is the level a router's release of the tier "supported"
// needs; SupportedLevelFor says an app's.
const SupportedLevel = LevelServe

// SupportedLevelFor is the level ev must reach for a release of the tier
// "supported": LevelApp for an app's evidence, SupportedLevel otherwise.
func SupportedLevelFor(ev *Evidence) Level {
	if ev.Image.Kind == evidencespec.KindApp {
		return LevelApp
	}
	return SupportedLevel
}

// LevelOf is the level ev reached.
func LevelOf(ev *Evidence) Level {
	if !ev.Result.Pass {
		return LevelNone
	}
	kernel, top := ev.passed(evidencespec.CheckCUDAKernel), ev.passed(supportedChecks(ev)[1])
	switch {
	case kernel && top:
		return SupportedLevelFor(ev)
	case kernel:
		return LevelKernel
	}
	return LevelSmoke
}

// supportedChecks are the checks the supported level of ev needs passed:
// cuda-kernel, and serve for a router or app for an app.
func supportedChecks(ev *Evidence) []string {
	if ev.Image.Kind == evidencespec.KindApp {
		return []string{evidencespec.CheckCUDAKernel, evidencespec.CheckApp}
	}
	return []string{evidencespec.CheckCUDAKernel, evidencespec.CheckServe}
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

// Missing names the checks ev lacks for its supported level, such as "no
// passing serve check"; empty when it has them.
func Missing(ev *Evidence) string {
	var out []string
	for _, name := range supportedChecks(ev) {
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
	case LevelApp:
		return "a CUDA kernel ran and the app's torch computed on the GPU: enough for supported"
	}
	return "not a pass"
}
