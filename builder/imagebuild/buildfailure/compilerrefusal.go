package buildfailure

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

// The CUDA compiler's refusals of an SM it cannot target, in the words the
// router stage prints them:
//
//   - candle's kernel crates check CUDA_COMPUTE_CAP against `nvcc
//     --list-gpu-code` before they compile (bindgen_cuda 0.1.5,
//     src/lib.rs:527, github.com/Narsil/bindgen_cuda a6b0c89):
//     "nvcc cannot target gpu arch 110. Available nvcc targets are [35, 37, 50, ...]."
//   - NVIDIA's nvcc itself, when a build runs it with the SM (11.8, seen
//     in the test bed): "nvcc fatal   : Value 'sm_110' is not defined for
//     option 'gpu-architecture'" for --gpu-architecture=sm_110, and
//     "nvcc fatal   : Unsupported gpu architecture 'compute_110'" for
//     -gencode arch=compute_110,code=sm_110.
var (
	bindgenCannotTarget = regexp.MustCompile(`nvcc cannot target gpu arch (\d+)\. Available nvcc targets are \[([0-9, ]*)\]`)
	nvccNotDefined      = regexp.MustCompile(`nvcc fatal\s*: Value '(?:sm|compute)_(\d+)a?' is not defined for option 'gpu-architecture'`)
	nvccUnsupported     = regexp.MustCompile(`nvcc fatal\s*: Unsupported gpu architecture '(?:sm|compute)_(\d+)a?'`)
)

// CompilerRefusalError is a release whose router stage asked the build
// base's CUDA compiler for an SM it cannot target.
type CompilerRefusalError struct {
	// Release is the release's name; CUDA its CUDA release.
	Release, CUDA string
	// SM is the SM the compiler was asked for.
	SM computecap.Capability
	// Targets are the release's SM targets ("8.7").
	Targets []string
	// Available are the SMs the compiler listed, when the refusal says
	// them (bindgen_cuda's): "sm_35", ..., "sm_90".
	Available []string
	// Err is the build's error, with the step's output.
	Err error
}

// Error names the release, the SM, why its CUDA cannot build it (the facts
// table's toolchain rule) and the fix in one sentence, then the build's
// own error.
func (e *CompilerRefusalError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "release %s: the CUDA compiler of its build base cannot target SM %s", e.Release, e.SM)
	if len(e.Available) > 0 {
		fmt.Fprintf(&b, " (it targets %s to %s)", e.Available[0], e.Available[len(e.Available)-1])
	}
	if v, err := computecap.ParseCUDAVersion(e.CUDA); err == nil {
		if why := computecap.CanCompile(e.SM, v); why != nil {
			fmt.Fprintf(&b, ": %s", toolchainReason(why))
		}
	}
	if !slices.Contains(e.Targets, e.SM.String()) {
		fmt.Fprintf(&b, "; the release builds for SM %s on CUDA %s, so the build itself asked for SM %s: compile each router "+
			"for the CUDA_COMPUTE_CAP jetbake passes, not a fixed SM", strings.Join(e.Targets, ", "), e.CUDA, e.SM)
	} else {
		fmt.Fprintf(&b, "; give SM %s a release whose build base has a CUDA that targets it", e.SM)
	}
	fmt.Fprintf(&b, "; %v", e.Err)
	return b.String()
}

func (e *CompilerRefusalError) Unwrap() error { return e.Err }

// toolchainReason is the reason of a computecap.ToolchainError, else its text.
func toolchainReason(err error) string {
	var te *computecap.ToolchainError
	if errors.As(err, &te) && te.Reason != "" {
		return te.Reason
	}
	return err.Error()
}

// CompilerRefusal turns err, a failed build of rel whose step printed out,
// into a CompilerRefusalError when the compiler refused an SM; else it
// returns err.
func CompilerRefusal(rel plan.Release, err error, out string) error {
	e := &CompilerRefusalError{Release: rel.Name, CUDA: rel.CUDA, Err: err}
	var digits string
	if m := bindgenCannotTarget.FindStringSubmatch(out); m != nil {
		digits = m[1]
		for _, n := range strings.Split(m[2], ",") {
			if n = strings.TrimSpace(n); n != "" {
				e.Available = append(e.Available, "sm_"+n)
			}
		}
	} else if m := nvccNotDefined.FindStringSubmatch(out); m != nil {
		digits = m[1]
	} else if m := nvccUnsupported.FindStringSubmatch(out); m != nil {
		digits = m[1]
	} else {
		return err
	}
	sm, perr := computecap.Parse(digits)
	if perr != nil {
		return err
	}
	e.SM = sm
	for _, t := range rel.Targets {
		e.Targets = append(e.Targets, t.SM)
	}
	return e
}
