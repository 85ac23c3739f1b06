package evidence

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// kernelRun is a passing kernel check's run, as the probe writes it.
func kernelRun() *Kernel {
	return &Kernel{SM: "8.7", Elements: 4096, JITMillis: 0.812, KernelMillis: 0.051, TotalMillis: 260.4}
}

func TestParseKernel(t *testing.T) {
	ev := golden(t, func(ev *Evidence) {
		ev.Result.Kernel = kernelRun()
		ev.Result.Checks = append(ev.Result.Checks, Check{Name: evidencespec.CheckCUDAKernel, Status: Passed,
			Detail: "a PTX kernel JIT-compiled by the driver ran on SM 8.7: 4096 of 4096 values exact (JIT 0.812 ms, kernel 0.051 ms)"})
	})
	require.Equal(t, kernelRun(), ev.Result.Kernel)
	failed := golden(t, func(ev *Evidence) {
		ev.Result.Kernel = &Kernel{SM: "8.7", Elements: 4096, Step: "cuModuleLoadDataEx", Error: "CUDA_ERROR_INVALID_PTX"}
	})
	require.Equal(t, "CUDA_ERROR_INVALID_PTX", failed.Result.Kernel.Error)
}

// TestParseKernelRejects: a hand-edited kernel run cannot carry a path, a
// host's text or numbers out of range into the store.
func TestParseKernelRejects(t *testing.T) {
	tests := []struct {
		name string
		edit func(k *Kernel)
		want string
	}{
		{"SM that is not a capability", func(k *Kernel) { k.SM = "sm_87" }, `result.kernel.sm: "sm_87": is not a compute capability`},
		{"unknown step", func(k *Kernel) { k.Step = "/home/alice/run" }, `result.kernel.step: "/home/alice/run": is not a step of the kernel check`},
		{"driver text as the error", func(k *Kernel) { k.Error = "CUDA_ERROR_X /home/alice" }, `result.kernel.error: "CUDA_ERROR_X /home/alice": is not a CUDA error's name`},
		{"error of another form", func(k *Kernel) { k.Error = "cudaErrorInvalidPtx" }, `result.kernel.error: "cudaErrorInvalidPtx"`},
		{"negative count", func(k *Kernel) { k.Wrong = -1 }, `result.kernel.wrong: "-1": is not a count of values`},
		{"huge count", func(k *Kernel) { k.Elements = 1 << 30 }, `result.kernel.elements: "1073741824"`},
		{"negative time", func(k *Kernel) { k.JITMillis = -1 }, `result.kernel.jit_ms: "-1": is not a time in milliseconds`},
		{"time past an hour", func(k *Kernel) { k.TotalMillis = 4e6 }, `result.kernel.total_ms: "4e+06"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := golden(t, nil)
			k := kernelRun()
			tt.edit(k)
			ev.Result.Kernel = k
			data, err := ev.Marshal()
			require.NoError(t, err)
			_, err = Parse(data)
			require.ErrorContains(t, err, tt.want)
		})
	}
	require.Error(t, validateKernel(&Kernel{KernelMillis: math.NaN()}))
}
