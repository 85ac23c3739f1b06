package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// TestRealDriverEvidence runs the linux/arm64 jetbake-probe --kernel, as
// released, in a Jetson container's root that holds NVIDIA's own
// libcuda.so.1 (driver 535, arm64) and no GPU device node, through QEMU.
// The driver loads and its cuInit says CUDA_ERROR_NO_DEVICE: the evidence
// says so in its allow-listed phrases (cuda-driver, binary-chosen,
// cuda-kernel with the driver's own error name), the stderr line names the
// failed checks, and the result is not a pass.
func TestRealDriverEvidence(t *testing.T) {
	root := eptest.RealDriverRoot(t, "agx-orin-container", eptest.RealOptions{Image: "jetpack6", NoNodes: true})
	code, stdout, stderr := eptest.RunChroot(t, root, []string{"PATH=/usr/local/bin:/usr/bin:/bin", "JETBAKE_IMAGE_DIGEST=" + testDigest},
		"/usr/local/bin/jetbake-probe", "--kernel")
	require.Equal(t, 1, code, stderr)
	var ev evidencespec.Evidence
	require.NoError(t, json.Unmarshal([]byte(stdout), &ev), stdout)
	require.False(t, ev.Result.Pass)
	require.Empty(t, ev.Host.CUDADriver, "cuInit failed before cuDriverGetVersion")
	require.Equal(t, "8.7", ev.Host.ComputeCapability, "the SoC's, from soc_id")
	checks := map[string]evidencespec.Check{}
	for _, c := range ev.Result.Checks {
		require.True(t, evidencespec.ValidDetail(c.Name, c.Detail), "%s: %q", c.Name, c.Detail)
		checks[c.Name] = c
	}
	for name, want := range map[string]evidencespec.Check{
		"cuda-driver":   {Status: evidencespec.Failed, Detail: evidencespec.DetailDriverNoDevice},
		"binary-chosen": {Status: evidencespec.Failed, Detail: evidencespec.DetailBinaryNoDevice},
		evidencespec.CheckCUDAKernel: {Status: evidencespec.Failed,
			Detail: "cuInit failed: CUDA_ERROR_NO_DEVICE (100): no GPU is visible: start the container with --runtime nvidia"},
		"gpu-matches-soc": {Status: evidencespec.Skipped, Detail: evidencespec.DetailGPUNeeds},
		"smoke":           {Status: evidencespec.Skipped, Detail: evidencespec.DetailSmokeNotAsked},
	} {
		want.Name = name
		require.Equal(t, want, checks[name])
	}
	require.NotNil(t, ev.Result.Kernel)
	require.Equal(t, "cuInit", ev.Result.Kernel.Step)
	require.Equal(t, "CUDA_ERROR_NO_DEVICE", ev.Result.Kernel.Error)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Equal(t, []string{"cuInit failed: CUDA_ERROR_NO_DEVICE (100)",
		"jetbake-probe: not a pass: failed cuda-driver, binary-chosen, cuda-kernel; skipped gpu-matches-soc, smoke"}, lines)
}
