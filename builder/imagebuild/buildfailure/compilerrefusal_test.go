package buildfailure

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/plan"
)

// The CUDA compiler's refusals of an SM, in the words bindgen_cuda and
// NVIDIA's nvcc 11.8 printed them in the test bed's cross build base
// (standin.TestStandinCrossBase checks nvcc's), become one sentence that
// names the release, the SM, why its CUDA cannot build it and the fix.
func TestCompilerRefusal(t *testing.T) {
	rel := plan.Release{Name: "jetpack6.2-sm110", CUDA: "12.6", Targets: []plan.Target{{SM: "8.7"}}}
	step := errors.New("process did not complete successfully: exit code: 101")
	const bindgen = "  thread 'main' panicked at $CARGO_HOME/registry/src/index.crates.io-1949cf8c6b5b557f/bindgen_cuda-0.1.5/src/lib.rs:527:13:\n" +
		"  nvcc cannot target gpu arch 110. Available nvcc targets are [35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90].\n"
	for name, tc := range map[string]struct {
		rel  plan.Release
		out  string
		want string
	}{
		"bindgen_cuda's check against nvcc's list": {rel: rel, out: bindgen,
			want: "release jetpack6.2-sm110: the CUDA compiler of its build base cannot target SM 11.0 (it targets sm_35 to sm_90): " +
				"sm_110 needs CUDA >= 13.0 (CUDA 12.8-12.9 knew Thor as sm_101, earlier releases not at all); " +
				"the release builds for SM 8.7 on CUDA 12.6, so the build itself asked for SM 11.0: compile each router for the CUDA_COMPUTE_CAP jetbake passes, not a fixed SM; "},
		"nvcc --gpu-architecture=sm_110": {rel: rel, out: "nvcc fatal   : Value 'sm_110' is not defined for option 'gpu-architecture'\n",
			want: "release jetpack6.2-sm110: the CUDA compiler of its build base cannot target SM 11.0: sm_110 needs CUDA >= 13.0"},
		"nvcc -gencode arch=compute_110": {rel: plan.Release{Name: "jetpack7.0", CUDA: "12.6", Targets: []plan.Target{{SM: "11.0"}}},
			out:  "nvcc fatal   : Unsupported gpu architecture 'compute_110'\n",
			want: "release jetpack7.0: the CUDA compiler of its build base cannot target SM 11.0: sm_110 needs CUDA >= 13.0 (CUDA 12.8-12.9 knew Thor as sm_101, earlier releases not at all); give SM 11.0 a release whose build base has a CUDA that targets it; "},
	} {
		t.Run(name, func(t *testing.T) {
			err := CompilerRefusal(tc.rel, step, tc.out)
			var ce *CompilerRefusalError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, step)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	other := errors.New("cargo failed")
	require.Equal(t, other, CompilerRefusal(rel, other, "error: could not compile `x`"), "other failures keep their words")
}
