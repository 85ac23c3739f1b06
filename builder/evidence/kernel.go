package evidence

import (
	"math"
	"regexp"
	"strconv"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// Kernel is the run of the probe's CUDA kernel check.
type Kernel = evidencespec.Kernel

// cudaErrorRE is the form of a CUresult's name, as the probe keeps it.
var cudaErrorRE = regexp.MustCompile(`^CUDA_ERROR_[A-Z0-9_]{1,50}$`)

// validateKernel checks result.kernel against the form the probe writes:
// the SM a capability, the step one the check takes, the error a CUDA
// error's name, counts and times in range.
func validateKernel(k *Kernel) error {
	if k.SM != "" {
		if c, err := computecap.Parse(k.SM); err != nil || c.String() != k.SM {
			return schemaErr("result.kernel.sm", k.SM, "is not a compute capability such as 8.7")
		}
	}
	if k.Step != "" && !oneOf(k.Step, evidencespec.KernelSteps()) {
		return schemaErr("result.kernel.step", k.Step, "is not a step of the kernel check, such as cuModuleLoadDataEx")
	}
	if err := optional("result.kernel.error", k.Error, cudaErrorRE, "is not a CUDA error's name such as CUDA_ERROR_INVALID_PTX"); err != nil {
		return err
	}
	if err := counts(map[string]int{"result.kernel.elements": k.Elements, "result.kernel.wrong": k.Wrong, "result.kernel.non_finite": k.NonFinite},
		1<<24, "is not a count of values from 0 to 16777216"); err != nil {
		return err
	}
	return millis(map[string]float64{"result.kernel.jit_ms": k.JITMillis, "result.kernel.kernel_ms": k.KernelMillis, "result.kernel.total_ms": k.TotalMillis})
}

// counts checks that each count, by its path, is from 0 to limit.
func counts(values map[string]int, limit int, want string) error {
	for path, n := range values {
		if n < 0 || n > limit {
			return schemaErr(path, strconv.Itoa(n), want)
		}
	}
	return nil
}

// millis checks that each time, by its path, is in milliseconds from 0 to
// an hour, as the probe bounds them.
func millis(values map[string]float64) error {
	for path, v := range values {
		if math.IsNaN(v) || v < 0 || v > 3_600_000 {
			return schemaErr(path, strconv.FormatFloat(v, 'g', -1, 64), "is not a time in milliseconds from 0 to 3600000")
		}
	}
	return nil
}
