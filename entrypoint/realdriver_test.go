package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// realEnv is the environment of the entrypoint in a RealDriverRoot.
var realEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}

// realRun runs the linux/arm64 entrypoint in root through QEMU.
func realRun(t *testing.T, root string, args ...string) (int, string, string) {
	t.Helper()
	return eptest.RunChroot(t, root, realEnv, append([]string{"/usr/local/bin/jetbake-entrypoint"}, args...)...)
}

// TestRealDriverSeesNoGPU runs the linux/arm64 entrypoint, as released, in
// a Jetson container's root that holds NVIDIA's own libcuda.so.1 (driver
// 535, arm64) where JetPack 6's runtime mounts it, through QEMU, with no GPU
// device: the driver loads, reports CUDA 12.2, and its cuInit says
// CUDA_ERROR_NO_DEVICE. When the entrypoint asks cuInit (soc_id not
// visible) it turns that into its one sentence, naming the missing device
// nodes, or the nodes it cannot use. On the fast path (soc_id visible) it
// asks cuDriverGetVersion alone: the real driver answers without cuInit,
// which the node cuInit would have made shows, so that only the check of
// the device nodes keeps the router from starting on a driver that can
// reach no GPU.
func TestRealDriverSeesNoGPU(t *testing.T) {
	lib := eptest.RealDriverLib + "/libcuda.so.1"
	t.Run("no device nodes, soc_id not visible", func(t *testing.T) {
		root := eptest.RealDriverRoot(t, "agx-orin-container", eptest.RealOptions{Image: "jetpack6", NoNodes: true})
		require.NoError(t, os.RemoveAll(filepath.Join(root, "sys")))
		code, stdout, stderr := realRun(t, root)
		require.Equal(t, 1, code)
		require.Empty(t, stdout)
		require.Equal(t, "jetbake-entrypoint: the CUDA driver "+lib+" is in this container but sees no GPU "+
			"(cuInit: CUDA_ERROR_NO_DEVICE) and no GPU device node is visible (looked for /dev/nvhost-ctrl-gpu, "+
			"/dev/nvgpu/igpu0/ctrl, /dev/nvmap, /dev/nvidiactl, /dev/nvidia0): start the container with --runtime nvidia "+
			"(or --device nvidia.com/gpu=all with CDI), which mounts them; if it was, check that the CSV files in "+
			"/etc/nvidia-container-runtime/host-files-for-container.d list the device nodes. Run with --explain for details.\n", stderr)

		// NVIDIA's driver, run as root, makes the control node it lacks
		// (a character device 195:255) during cuInit, as it can in a
		// Docker container, which may mknod; it still sees no GPU. The
		// next start would see that node: --explain starts afresh.
		requireControlNode(t, root)
		code, stdout, stderr = realRun(t, root, "--explain")
		require.Equal(t, 0, code, stderr)
		var e explainOutput
		require.NoError(t, json.Unmarshal([]byte(stdout), &e), stdout)
		require.Equal(t, "full", e.Path, stdout)
		require.Equal(t, lib+": cuInit failed: CUDA_ERROR_NO_DEVICE (100)", sourceNamed(t, e.Sources, "cuda-driver").Detail)
		require.Empty(t, e.Choice)
		require.Contains(t, e.Failure, "sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE)")
	})
	t.Run("device nodes the driver cannot use, soc_id not visible", func(t *testing.T) {
		root := eptest.RealDriverRoot(t, "agx-orin-container", eptest.RealOptions{Image: "jetpack6"})
		require.NoError(t, os.RemoveAll(filepath.Join(root, "sys")))
		code, stdout, stderr := realRun(t, root)
		require.Equal(t, 1, code)
		require.Empty(t, stdout)
		require.Equal(t, "jetbake-entrypoint: the CUDA driver "+lib+" is in this container but sees no GPU "+
			"(cuInit: CUDA_ERROR_NO_DEVICE) although the GPU device nodes /dev/nvhost-ctrl-gpu, /dev/nvmap are there: "+
			"check that the container's user can open them (on a Jetson they belong to the video group) and that "+
			"CUDA_VISIBLE_DEVICES, if set, names the GPU. Run with --explain for details.\n", stderr)
	})
	t.Run("the fast path asks the version alone", func(t *testing.T) {
		root := eptest.RealDriverRoot(t, "agx-orin-container", eptest.RealOptions{Image: "jetpack6", NoNodes: true})
		code, stdout, stderr := realRun(t, root, "--explain")
		require.Equal(t, 0, code, stderr)
		var e explainOutput
		require.NoError(t, json.Unmarshal([]byte(stdout), &e), stdout)
		require.Equal(t, "fast", e.Path, stdout)
		drv := sourceNamed(t, e.Sources, "cuda-driver")
		require.Equal(t, "CUDA 12.2", drv.Value, "cuDriverGetVersion of driver 535: 12020")
		require.Equal(t, "12.2", e.DriverCUDA)
		require.Empty(t, e.Choice)
		require.Equal(t, missingNodes("NVIDIA Jetson AGX Orin Developer Kit", lib), e.Failure+"\n")
		require.Equal(t, &detect.NodeCheck{Driver: "nvgpu", Needs: []string{"/dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl)", "/dev/nvmap"},
			Missing: []string{"/dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl)", "/dev/nvmap"},
			Result:  "refused: the CUDA driver would load and reach no GPU"}, e.DeviceNodes)
		_, err := os.Stat(filepath.Join(root, "dev", "nvidiactl"))
		require.ErrorIs(t, err, fs.ErrNotExist, "no cuInit, so no node made by the driver")
	})
}

// requireControlNode checks that NVIDIA's cuInit made /dev/nvidiactl in
// root, and removes it.
func requireControlNode(t *testing.T, root string) {
	t.Helper()
	ctl := filepath.Join(root, "dev", "nvidiactl")
	fi, err := os.Stat(ctl)
	require.NoError(t, err, "NVIDIA's cuInit makes /dev/nvidiactl")
	st, ok := fi.Sys().(*syscall.Stat_t)
	require.True(t, ok)
	require.Equal(t, fs.ModeCharDevice|fs.ModeDevice, fi.Mode().Type())
	require.Equal(t, uint64(195<<8|255), uint64(st.Rdev))
	require.NoError(t, os.Remove(ctl))
}

// TestRealNvidiaSMI runs NVIDIA's own nvidia-smi (driver 535, arm64) as the
// entrypoint's nvidia-smi source, through QEMU, in a container without the
// runtime: with libnvidia-ml.so.1 not findable it exits 12, with NVML in
// the loader's cache (as the runtime's ldconfig hook leaves it) it finds no
// driver and exits 9. The entrypoint says what each status means, in its
// sentence and in --explain, never what nvidia-smi printed.
func TestRealNvidiaSMI(t *testing.T) {
	tests := []struct {
		name   string
		opts   eptest.RealOptions
		detail string
	}{
		{name: "NVML not findable", opts: eptest.RealOptions{Image: "jetpack6", NoLibcuda: true, NvidiaSmi: true},
			detail: "/usr/bin/nvidia-smi: exit status 12: NVIDIA's NVML library (libnvidia-ml.so.1) could not be found or loaded"},
		{name: "NVML in the loader's cache, no driver", opts: eptest.RealOptions{Image: "jetpack6", NoLibcuda: true, NvidiaSmi: true, NVMLInCache: true},
			detail: "/usr/bin/nvidia-smi: exit status 9: it cannot reach the NVIDIA driver (no GPU device node, or no kernel driver)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.RealDriverRoot(t, "no-runtime", tt.opts)
			code, stdout, stderr := realRun(t, root)
			require.Equal(t, 1, code)
			require.Empty(t, stdout)
			require.Equal(t, "jetbake-entrypoint: no NVIDIA GPU is visible in this container: it was probably started without "+
				"--runtime nvidia (or --device nvidia.com/gpu=all with CDI). Looked at: JETBAKE_COMPUTE_CAP (not set), "+
				"cuda-driver (libcuda.so.1 not found), nvidia-smi ("+tt.detail+"), device-tree (absent), soc_id (absent), "+
				"/etc/nv_tegra_release (absent), GPU device nodes (none). Run with --explain for details, or set "+
				"JETBAKE_COMPUTE_CAP (such as 8.7) to choose a binary by hand.\n", stderr)
			require.NotContains(t, stderr, "NVIDIA-SMI")

			code, stdout, stderr = realRun(t, root, "--explain")
			require.Equal(t, 0, code, stderr)
			var e explainOutput
			require.NoError(t, json.Unmarshal([]byte(stdout), &e), stdout)
			smi := sourceNamed(t, e.Sources, "nvidia-smi")
			require.False(t, smi.Found)
			require.Equal(t, tt.detail, smi.Detail)
		})
	}
}
