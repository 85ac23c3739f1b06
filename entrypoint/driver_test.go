package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// explainOutput is the part of --explain's JSON the tests read.
type explainOutput struct {
	Path        string             `json:"path"`
	PathWhy     string             `json:"path_why"`
	Sources     []detect.Source    `json:"sources"`
	ComputeCap  string             `json:"compute_cap"`
	GPU         string             `json:"gpu"`
	DetectedBy  string             `json:"detected_by"`
	HostL4T     string             `json:"host_l4t"`
	HostJetPack string             `json:"host_jetpack"`
	Model       string             `json:"model"`
	DriverCUDA  string             `json:"driver_cuda"`
	HostFiles   []detect.Source    `json:"host_files"`
	DeviceNodes *detect.NodeCheck  `json:"device_nodes"`
	Candidates  []detect.Candidate `json:"candidates"`
	Choice      string             `json:"choice"`
	Args        []string           `json:"args"`
	LibraryPath string             `json:"ld_library_path"`
	Failure     string             `json:"failure"`
}

// sourceNamed returns the source called name.
func sourceNamed(t *testing.T, sources []detect.Source, name string) detect.Source {
	t.Helper()
	for _, s := range sources {
		if s.Name == name {
			return s
		}
	}
	require.Failf(t, "no source", "%s not among %+v", name, sources)
	return detect.Source{}
}

// TestDriverProbe runs the real jetbake-cudaprobe on the fake libcuda.so.1.
func TestDriverProbe(t *testing.T) {
	b := eptest.Build(t)
	probe := "JETBAKE_CUDAPROBE=" + b.CUDAProbe
	tests := []struct {
		name, host, release, image, libDir string
		compat, compatOrin                 bool
		env                                []string
		want, wantLD, wantDriver, wantPath string
	}{
		{name: "Thor: SM from soc_id, driver version only; Thor's image compat folder is not used",
			host: "thor-jp7", image: "jetpack7.2", libDir: "/usr/lib/aarch64-linux-gnu", compat: true,
			env:  []string{"JETBAKE_SKIP_L4T_CHECK=1", "FAKE_CUDA_MAJOR=10", "FAKE_CUDA_MINOR=1", "FAKE_CUDA_DRIVER_VERSION=13000", "LD_LIBRARY_PATH=/opt/lib"},
			want: "/usr/local/bin/router-110", wantDriver: "soc_id", wantPath: detect.PathFast},
		{name: "R38 Thor whose driver is as new as the image's CUDA passes the SBSA rule",
			host: "thor-jp7", image: "jetpack7.2", libDir: "/usr/lib/aarch64-linux-gnu", compat: true,
			env:  []string{"FAKE_CUDA_MAJOR=11", "FAKE_CUDA_MINOR=0", "FAKE_CUDA_DRIVER_VERSION=13020"},
			want: "/usr/local/bin/router-110", wantDriver: "soc_id", wantPath: detect.PathFast},
		{name: "older driver of the same CUDA major on a Tegra host: the L4T rule decides",
			host: "orin-nano-jp6", image: "jetpack6", libDir: "/usr/lib/aarch64-linux-gnu/nvidia",
			env:  []string{"FAKE_CUDA_DRIVER_VERSION=12020"},
			want: "/usr/local/bin/router-87", wantDriver: "soc_id", wantPath: detect.PathFast},
		{name: "driver disagrees with the L4T release: full query, the override still wins",
			host: "thor-jp7", image: "jetpack7.2", libDir: "/usr/lib/aarch64-linux-gnu", compat: true,
			env:  []string{"JETBAKE_SKIP_L4T_CHECK=1", "JETBAKE_COMPUTE_CAP=11.0", "FAKE_CUDA_DRIVER_VERSION=12090"},
			want: "/usr/local/bin/router-110", wantDriver: "JETBAKE_COMPUTE_CAP", wantPath: detect.PathFull},
		{name: "Orin on R39 with an older 13.x driver uses the image's compat_orin folder",
			host: "orin-nano-jp6", release: "39.2.0", image: "jetpack7.2", libDir: "/usr/lib/aarch64-linux-gnu/nvidia", compat: true, compatOrin: true,
			env:  []string{"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=13010"},
			want: "/usr/local/bin/router-87", wantLD: "/usr/local/cuda/compat_orin", wantDriver: "soc_id", wantPath: detect.PathFast},
		{name: "JetPack 5 keeps libcuda in the tegra folder",
			host: "agx-orin-jp5", image: "jetpack6", libDir: "/usr/lib/aarch64-linux-gnu/tegra",
			env:  []string{"JETBAKE_SKIP_L4T_CHECK=1", "FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=11040"},
			want: "/usr/local/bin/router-87", wantDriver: "soc_id", wantPath: detect.PathFast},
		{name: "desktop GPU through LD_LIBRARY_PATH",
			host: "desktop-rtx3090", image: "desktop", libDir: "/usr/local/nvidia/lib64",
			env:  []string{"LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=9"},
			want: "/usr/local/bin/router-80", wantDriver: "cuda-driver", wantPath: detect.PathFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, tt.host, tt.image)
			eptest.InstallLibcuda(t, root, tt.libDir)
			if tt.release != "" {
				eptest.WriteFile(t, root, host.TegraReleasePath, eptest.StandinRelease(tt.release), 0o644)
			}
			if tt.compat {
				eptest.WriteFile(t, root, "/usr/local/cuda/compat/libcuda.so.1", "image's forward-compatibility driver", 0o644)
			}
			if tt.compatOrin {
				eptest.WriteFile(t, root, "/usr/local/cuda/compat_orin/libcuda.so.1", "Orin's forward-compatibility driver", 0o644)
			}
			env := append([]string{probe}, tt.env...)
			r := runIn(t, root, nil, env...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Equal(t, filepath.Join(root, tt.want), r.exec.path)
			ld, _ := detect.Environ(r.exec.env).Lookup("LD_LIBRARY_PATH")
			if tt.wantLD == "" {
				want, _ := detect.Environ(eptest.BaseEnv(root, env...)).Lookup("LD_LIBRARY_PATH")
				require.Equal(t, want, ld)
			} else {
				require.Equal(t, filepath.Join(root, tt.wantLD), ld)
			}
			e := explainRun(t, root, env...)
			require.Equal(t, tt.wantDriver, e.DetectedBy)
			require.Equal(t, tt.wantPath, e.Path, e.PathWhy)
			require.True(t, sourceNamed(t, e.Sources, "cuda-driver").Found)
		})
	}
}

// explainRun runs --explain in-process and decodes its output.
func explainRun(t *testing.T, root string, env ...string) explainOutput {
	t.Helper()
	r := runIn(t, root, []string{"--explain"}, env...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Nil(t, r.exec)
	var e explainOutput
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &e), r.stdout)
	return e
}

// TestDriverProbeFailures checks what the driver source says when it
// cannot answer, and that detection moves on.
func TestDriverProbeFailures(t *testing.T) {
	b := eptest.Build(t)
	tests := []struct {
		name, probe string
		env         []string
		want        string
	}{
		{name: "cuInit fails", probe: b.CUDAProbe, env: []string{"FAKE_CUDA_INIT_RESULT=999"},
			want: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: cuInit failed: CUDA_ERROR_UNKNOWN (999)"},
		{name: "device unavailable, named by the probe's table", probe: b.CUDAProbe, env: []string{"FAKE_CUDA_INIT_RESULT=46"},
			want: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: cuInit failed: CUDA_ERROR_DEVICE_UNAVAILABLE (46)"},
		{name: "probe missing", probe: "/nonexistent/jetbake-cudaprobe",
			want: "found /usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1 but not /nonexistent/jetbake-cudaprobe (set JETBAKE_CUDAPROBE to its path)"},
		{name: "probe prints something else", probe: eptest.Script(t, "echo hello"),
			want: `/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: probe printed "hello", not its JSON line: invalid character 'h' looking for beginning of value`},
		{name: "probe leaves out fields", probe: eptest.Script(t, `echo '{"major":8}'`),
			want: `/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: probe printed "{\"major\":8}" without major, minor and driver_version`},
		{name: "probe fails without a word", probe: eptest.Script(t, "exit 3"),
			want: `/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: exit status 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6")
			// Without soc_id there is no fast path: the driver is asked in full.
			require.NoError(t, os.Remove(filepath.Join(root, host.SocIDPath)))
			eptest.InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu/nvidia")
			env := append([]string{"JETBAKE_CUDAPROBE=" + tt.probe}, tt.env...)
			r := runIn(t, root, nil, env...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Equal(t, filepath.Join(root, "/usr/local/bin/router-87"), r.exec.path)
			e := explainRun(t, root, env...)
			drv := sourceNamed(t, e.Sources, "cuda-driver")
			require.False(t, drv.Found)
			require.Equal(t, tt.want, drv.Detail)
			require.Equal(t, "device-tree", e.DetectedBy)
		})
	}
}

// TestDriverLoadFailureUnderTheRuntime: the NVIDIA runtime mounted its files
// (nv_tegra_release, the GPU device nodes, libcuda.so.1) but soc_id is not
// visible and the driver library does not load. The sentence names that
// library and its failure, not a missing --runtime nvidia, which is wrong here.
func TestDriverLoadFailureUnderTheRuntime(t *testing.T) {
	b := eptest.Build(t)
	root := eptest.NewSysroot(t, "agx-orin-container", "jetpack6")
	require.NoError(t, os.RemoveAll(filepath.Join(root, "/sys/devices/soc0")))
	lib := "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1"
	eptest.WriteFile(t, root, lib, "not a shared object\n", 0o644)
	r := runIn(t, root, nil, "JETBAKE_CUDAPROBE="+b.CUDAProbe)
	require.Equal(t, 1, r.code)
	require.Nil(t, r.exec)
	require.NotContains(t, r.stderr, "without --runtime nvidia")
	require.Contains(t, r.stderr, "jetbake-entrypoint: the NVIDIA runtime is there (/etc/nv_tegra_release, "+
		"GPU device nodes /dev/nvhost-ctrl-gpu, /dev/nvmap, "+lib+") but its CUDA driver "+lib+" cannot be used: "+lib+": ")
	require.Contains(t, r.stderr, "dlopen ")
	require.Contains(t, r.stderr, "Check the host's CUDA driver (nvidia-l4t-cuda) and that the CSV files in "+
		"/etc/nvidia-container-runtime/host-files-for-container.d list it and what it links")

	// Without the runtime's traces the sentence stays the --runtime nvidia one.
	require.NoError(t, os.Remove(filepath.Join(root, host.TegraReleasePath)))
	for _, n := range []string{"/dev/nvhost-ctrl-gpu", "/dev/nvmap"} {
		require.NoError(t, os.Remove(filepath.Join(root, n)))
	}
	r = runIn(t, root, nil, "JETBAKE_CUDAPROBE="+b.CUDAProbe)
	require.Contains(t, r.stderr, "it was probably started without --runtime nvidia")
}

// TestDriverSeesNoGPU: libcuda.so.1 loads but its cuInit returns
// CUDA_ERROR_NO_DEVICE. No router can use the GPU then, whatever the device
// tree says: when the entrypoint asks cuInit (soc_id not visible) it
// refuses with one sentence that names what is missing, the device nodes
// or the right to open them. The fast path (soc_id visible) never calls
// cuInit: it refuses when the device nodes of the Orin's driver are
// missing (missingNodes), and chooses the router when they are there. The
// override still chooses by hand.
func TestDriverSeesNoGPU(t *testing.T) {
	b := eptest.Build(t)
	lib := "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1"
	noNodes := "jetbake-entrypoint: the CUDA driver " + lib + " is in this container but sees no GPU " +
		"(cuInit: CUDA_ERROR_NO_DEVICE) and no GPU device node is visible (looked for /dev/nvhost-ctrl-gpu, " +
		"/dev/nvgpu/igpu0/ctrl, /dev/nvmap, /dev/nvidiactl, /dev/nvidia0): start the container with --runtime nvidia " +
		"(or --device nvidia.com/gpu=all with CDI), which mounts them; if it was, check that the CSV files in " +
		"/etc/nvidia-container-runtime/host-files-for-container.d list the device nodes. Run with --explain for details.\n"
	withNodes := "jetbake-entrypoint: the CUDA driver " + lib + " is in this container but sees no GPU " +
		"(cuInit: CUDA_ERROR_NO_DEVICE) although the GPU device nodes /dev/nvhost-ctrl-gpu, /dev/nvmap are there: " +
		"check that the container's user can open them (on a Jetson they belong to the video group) and that " +
		"CUDA_VISIBLE_DEVICES, if set, names the GPU. Run with --explain for details.\n"
	tests := []struct {
		name             string
		removeNodes      bool
		removeSocID      bool
		env              []string
		want, wantPathOf string
	}{
		{name: "no soc_id, no device nodes", removeNodes: true, removeSocID: true, want: noNodes,
			wantPathOf: "/sys/devices/soc0/soc_id names no Jetson SoC"},
		{name: "no soc_id, device nodes the driver cannot use", removeSocID: true, want: withNodes},
		{name: "the fast path does not call cuInit, and refuses without the nodes", removeNodes: true,
			want: "jetbake-entrypoint: " + missingNodes("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super", lib)},
		{name: "the fast path does not call cuInit, and starts with the nodes"},
		{name: "the override chooses by hand", removeNodes: true, removeSocID: true, env: []string{"JETBAKE_COMPUTE_CAP=8.7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6")
			eptest.WriteFile(t, root, "/dev/nvhost-ctrl-gpu", "", 0o644)
			eptest.WriteFile(t, root, "/dev/nvmap", "", 0o644)
			if tt.removeNodes {
				require.NoError(t, os.RemoveAll(filepath.Join(root, "dev")))
			}
			if tt.removeSocID {
				require.NoError(t, os.Remove(filepath.Join(root, host.SocIDPath)))
			}
			eptest.InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu/nvidia")
			env := append([]string{"JETBAKE_CUDAPROBE=" + b.CUDAProbe, "FAKE_CUDA_INIT_RESULT=100"}, tt.env...)
			r := runIn(t, root, nil, env...)
			if tt.want == "" {
				require.Equal(t, 0, r.code, r.stderr)
				require.Equal(t, filepath.Join(root, "/usr/local/bin/router-87"), r.exec.path)
				return
			}
			require.Equal(t, 1, r.code)
			require.Nil(t, r.exec)
			require.Equal(t, tt.want, r.stderr)
			if tt.wantPathOf != "" {
				e := runIn(t, root, []string{"--explain"}, env...)
				require.Contains(t, e.stdout, `"path_why": "`+tt.wantPathOf+`"`)
			}
		})
	}
}
