package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// fakePython stands in for the app's python with NGC's torch: run as
// python -c SNIPPET (it refuses anything else), it answers as the snippet
// does on a Jetson in the state FAKE_TORCH names: its JSON line on stdout,
// and on a failure torch's traceback on stderr and exit status 1.
const fakePython = `#!/bin/sh
if [ "$1" != "-c" ]; then echo "fake python: want -c SNIPPET, got $*" >&2; exit 2; fi
for want in 'torch.cuda.is_available()' 'torch.version.cuda' 'get_device_name(0)' 'isfinite' "device=\"cuda\""; do
  case "$2" in *"$want"*) ;; *) echo "fake python: the snippet lacks $want" >&2; exit 2;; esac
done
ok='"cuda": "12.6", "available": true, "device": "Orin", "capability": "8.7"'
case "$FAKE_TORCH" in
pass) echo "{\"step\": \"\", $ok, \"finite\": true}" ;;
nonfinite) echo "{\"step\": \"\", $ok, \"finite\": false}" ;;
unavailable)
  echo '/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:174: UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu.' >&2
  echo '{"step": "", "cuda": "12.6", "available": false}' ;;
cpu) echo '{"step": "", "cuda": null, "available": false}' ;;
desktop) echo '{"step": "", "cuda": "12.6", "available": true, "device": "NVIDIA GeForce RTX 3090", "capability": "8.6", "finite": true}' ;;
nokernel)
  echo "{\"step\": \"matmul\", $ok, \"error\": \"AcceleratorError: CUDA error: no kernel image is available for execution on the device\"}"
  cat >&2 <<'TB'
Traceback (most recent call last):
  File "<string>", line 14, in <module>
torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with ` + "`TORCH_USE_CUDA_DSA`" + ` to enable device-side assertions.
TB
  exit 1 ;;
notorch)
  echo '{"step": "import", "error": "ModuleNotFoundError: No module named '"'torch'"'"}'
  echo "ModuleNotFoundError: No module named 'torch'" >&2
  exit 1 ;;
crash)
  echo 'ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory' >&2
  exit 3 ;;
*) echo "fake python: FAKE_TORCH=$FAKE_TORCH" >&2; exit 2 ;;
esac
`

// appRoot is the Orin Nano Super sysroot with the fake driver and an app
// image whose venv python is the fake one.
func appRoot(t *testing.T) string {
	t.Helper()
	root := eptest.NewSysroot(t, "orin-nano-jp6", "app-jetpack6")
	eptest.InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu/nvidia")
	eptest.WriteFile(t, root, venvPython, fakePython, 0o755)
	return root
}

// appCheckOf returns the app check.
func appCheckOf(t *testing.T, ev *evidencespec.Evidence) evidencespec.Check {
	t.Helper()
	for _, c := range ev.Result.Checks {
		if c.Name == evidencespec.CheckApp {
			return c
		}
	}
	require.Fail(t, "no app check", "%+v", ev.Result.Checks)
	return evidencespec.Check{}
}

func TestProbeAppPass(t *testing.T) {
	r := runProbeIn(t, appRoot(t), "arm64", []string{"--smoke", "--kernel"}, "JETBAKE_IMAGE_DIGEST="+testDigest, "FAKE_TORCH=pass")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, r.ev.Result.Pass)
	require.Equal(t, evidencespec.KindApp, r.ev.Image.Kind)
	c := appCheckOf(t, &r.ev)
	require.Equal(t, evidencespec.Passed, c.Status)
	require.Equal(t, "torch for CUDA 12.6 sees the Jetson Orin GPU (SM 8.7) and a CUDA matrix product on it is finite", c.Detail)
}

func TestProbeRouterHasNoAppCheck(t *testing.T) {
	r := runProbeIn(t, orinRoot(t), "arm64", []string{"--smoke"}, "JETBAKE_IMAGE_DIGEST="+testDigest)
	require.NotContains(t, statuses(&r.ev), evidencespec.CheckApp)
	require.Empty(t, r.ev.Image.Kind)
}

func TestProbeAppFailures(t *testing.T) {
	tests := []struct {
		torch, detail, stderr string
	}{
		{torch: "unavailable", detail: "torch.cuda.is_available() is False for torch built for CUDA 12.6: start the container with --runtime nvidia",
			stderr: "CUDA driver initialization failed"},
		{torch: "nokernel", detail: "a CUDA matrix product failed: CUDA error: no kernel image is available for execution on the device: " +
			"this torch holds no code for the GPU's SM, take the base's torch",
			stderr: `jetbake-probe: the app check failed at a CUDA matrix product: "AcceleratorError: CUDA error: no kernel image is available for execution on the device"`},
		{torch: "nonfinite", detail: "a CUDA matrix product in torch gave values that are not finite on SM 8.7"},
		{torch: "cpu", detail: "torch.version.cuda is None: this torch was built without CUDA, it is not the base's: keep the vendor torch"},
		{torch: "desktop", detail: "torch's device 0 is not a Jetson GPU"},
		{torch: "notorch", detail: "import torch failed: No module named 'torch': the app's python does not see the base's torch; make its venv with --system-site-packages"},
		{torch: "crash", detail: "the app check's python exited 3 without a result line: run the image's python for its error",
			stderr: `jetbake-probe: the app check's python exited 3: "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"`},
	}
	for _, tt := range tests {
		t.Run(tt.torch, func(t *testing.T) {
			r := runProbeIn(t, appRoot(t), "arm64", []string{"--smoke"}, "JETBAKE_IMAGE_DIGEST="+testDigest, "FAKE_TORCH="+tt.torch)
			require.Equal(t, 1, r.code, r.stderr)
			require.False(t, r.ev.Result.Pass)
			c := appCheckOf(t, &r.ev)
			require.Equal(t, evidencespec.Failed, c.Status, c.Detail)
			require.Equal(t, tt.detail, c.Detail)
			require.Contains(t, r.stderr, tt.stderr)
			require.Contains(t, r.stderr, "failed app")
		})
	}
}

func TestProbeAppPythonChoice(t *testing.T) {
	// The python next to the command wins over /opt/venv's; without
	// either, python3 on PATH; with none, the check says so.
	root := appRoot(t)
	eptest.WriteFile(t, root, "/usr/local/bin/python", "#!/bin/sh\necho 'next to the command' >&2\nexit 9\n", 0o755)
	r := runProbeIn(t, root, "arm64", nil, "FAKE_TORCH=pass")
	require.Contains(t, r.stderr, "next to the command")
	require.Equal(t, evidencespec.Failed, appCheckOf(t, &r.ev).Status)

	root = eptest.NewSysroot(t, "orin-nano-jp6", "app-jetpack6")
	eptest.InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu/nvidia")
	r = runProbeIn(t, root, "arm64", nil, "FAKE_TORCH=pass")
	require.Equal(t, "no python for the app: none next to its command, no venv python and no python3 on PATH", appCheckOf(t, &r.ev).Detail)
	eptest.WriteFile(t, root, "/usr/bin/python3", fakePython, 0o755)
	r = runProbeIn(t, root, "arm64", nil, "FAKE_TORCH=pass")
	require.Equal(t, evidencespec.Passed, appCheckOf(t, &r.ev).Status)
}

// TestProbeAppSnippetOnARealPython runs the snippet itself, on the test
// machine's python3, against a stand-in torch module that answers as
// torch does, and raises its real error's text (with the lines torch adds
// after the first) where the GPU has no code.
func TestProbeAppSnippetOnARealPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on this machine: the fake python tests cover the probe's side")
	}
	out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	require.NoError(t, err)
	root := appRoot(t)
	eptest.WriteFile(t, root, venvPython, "#!/bin/sh\nexec "+strings.TrimSpace(string(out))+" \"$@\"\n", 0o755)
	eptest.WriteFile(t, root, "/torch-standin/torch/__init__.py", standinTorch, 0o644)
	pyPath := "PYTHONPATH=" + root + "/torch-standin"
	r := runProbeIn(t, root, "arm64", nil, pyPath, "FAKE_TORCH=pass")
	require.Equal(t, "torch for CUDA 12.6 sees the Jetson Orin GPU (SM 8.7) and a CUDA matrix product on it is finite", appCheckOf(t, &r.ev).Detail)
	r = runProbeIn(t, root, "arm64", nil, pyPath, "FAKE_TORCH=nokernel")
	require.Equal(t, "a CUDA matrix product failed: CUDA error: no kernel image is available for execution on the device: "+
		"this torch holds no code for the GPU's SM, take the base's torch", appCheckOf(t, &r.ev).Detail)
	require.Contains(t, r.stderr, "Traceback (most recent call last)")
	r = runProbeIn(t, root, "arm64", nil, "PYTHONPATH=/nonexistent", "FAKE_TORCH=pass")
	require.Equal(t, "import torch failed: No module named 'torch': the app's python does not see the base's torch; "+
		"make its venv with --system-site-packages", appCheckOf(t, &r.ev).Detail)
}

// standinTorch is the part of torch the snippet calls, as NGC's torch
// answers on an Orin; FAKE_TORCH=nokernel raises torch's error for a GPU
// the build holds no code for.
const standinTorch = `import os
__version__ = "2.8.0a0+5228986c39.nv25.6"
class version:
    cuda = "12.6"
class _T:
    def __init__(self, v): self.v = v
    def __matmul__(self, o):
        if os.environ.get("FAKE_TORCH") == "nokernel":
            raise RuntimeError("CUDA error: no kernel image is available for execution on the device\n"
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
        return _T(self.v * o.v * 4)
    def isfinite(self): return _T(self.v == self.v and abs(self.v) != float("inf"))
    def all(self): return self
    def item(self): return bool(self.v)
def ones(*shape, device=None): return _T(1.0)
class cuda:
    @staticmethod
    def is_available(): return True
    @staticmethod
    def get_device_name(i): return "Orin"
    @staticmethod
    def get_device_capability(i): return (8, 7)
`
