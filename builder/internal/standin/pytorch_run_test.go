package standin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/computecap"
)

// gateScript is an app's Jetson gate: CUDA available, the device, a small op.
const gateScript = `
import warnings, torch
warnings.simplefilter("always")
print("version", torch.__version__, torch.version.cuda, torch.cuda.get_arch_list())
ok = torch.cuda.is_available()
print("available", ok)
if ok:
    print("device", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
    y = torch.ones(8, device="cuda") * 2.0 + 1.0
    print("op", y.sum().item(), bool(torch.isfinite(y).all()))
`

// TestStandinTorchOnJetsons runs the gate with each line's stand-in torch
// on fake Jetsons, and checks that it fails as real torch fails: no driver,
// a driver older than its CUDA, a GPU its library has no code for.
func TestStandinTorchOnJetsons(t *testing.T) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	k, err := standin.BedKit(root)
	require.NoError(t, err)
	require.Equal(t, 0, os.Geteuid(), "runc needs root")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	orin, err := k.JetsonHost(ctx, "Orin", computecap.Capability{Major: 8, Minor: 7}, computecap.CUDAVersion{Major: 12, Minor: 6})
	require.NoError(t, err)
	thor, err := k.JetsonHost(ctx, "NVIDIA Thor", computecap.Capability{Major: 11, Minor: 0}, computecap.CUDAVersion{Major: 13, Minor: 0})
	require.NoError(t, err)
	runner, err := runimage.NewRunner(t.TempDir())
	require.NoError(t, err)
	run := func(jetpack string, host runimage.Host) runimage.Result {
		c, err := k.UnpackPyTorch(ctx, jetpack, t.TempDir())
		require.NoError(t, err)
		res, err := runner.Run(ctx, c.Rootfs, c.Config, host, []string{"python3", "-c", gateScript})
		require.NoError(t, err)
		t.Logf("%s on %s: %s%s", jetpack, host.Name, res.Stdout, res.Stderr)
		return res
	}

	res := run("6.2", orin)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, res.Stdout, "version 2.8.0a0+5228986c39.nv25.06 12.9 ['sm_87']\navailable True\ndevice Orin (8, 7)\nop 24.0 True\n")

	res = run("6.2", runimage.Host{Name: "no driver"})
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, res.Stdout, "available False")
	require.Contains(t, res.Stderr, "Found no NVIDIA driver on your system")

	res = run("6.2", thor)
	require.NotEqual(t, 0, res.ExitCode)
	require.Contains(t, res.Stdout, "available True\ndevice NVIDIA Thor (11, 0)\n")
	require.Contains(t, res.Stderr, "NVIDIA Thor with CUDA capability sm_110 is not compatible with the current PyTorch installation.")
	require.Contains(t, res.Stderr, "RuntimeError: CUDA error: no kernel image is available for execution on the device")

	res = run("7.0", thor)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, res.Stdout, "version 2.8.0a0+34c6371d24.nv25.08 13.0 ['sm_87', 'sm_90', 'sm_100', 'sm_103', 'sm_110', 'sm_120', 'sm_121', 'compute_121']\navailable True\ndevice NVIDIA Thor (11, 0)\nop 24.0 True\n")

	res = run("7.0", orin)
	require.Contains(t, res.Stdout, "available False")
	require.Contains(t, res.Stderr, "The NVIDIA driver on your system is too old (found version 12060)")
}
