package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// explainOutput is the part of --explain's JSON the tests read.
type explainOutput struct {
	Path        string      `json:"path"`
	PathWhy     string      `json:"path_why"`
	Sources     []source    `json:"sources"`
	ComputeCap  string      `json:"compute_cap"`
	GPU         string      `json:"gpu"`
	DetectedBy  string      `json:"detected_by"`
	HostL4T     string      `json:"host_l4t"`
	HostJetPack string      `json:"host_jetpack"`
	Model       string      `json:"model"`
	DriverCUDA  string      `json:"driver_cuda"`
	HostFiles   []source    `json:"host_files"`
	Candidates  []candidate `json:"candidates"`
	Choice      string      `json:"choice"`
	Args        []string    `json:"args"`
	LibraryPath string      `json:"ld_library_path"`
	Failure     string      `json:"failure"`
}

// sourceNamed returns the source called name.
func sourceNamed(t *testing.T, sources []source, name string) source {
	t.Helper()
	for _, s := range sources {
		if s.Name == name {
			return s
		}
	}
	require.Failf(t, "no source", "%s not among %+v", name, sources)
	return source{}
}

// TestDriverProbe runs the real jetbake-cudaprobe on the fake libcuda.so.1.
func TestDriverProbe(t *testing.T) {
	b := buildBinaries(t)
	probe := "JETBAKE_CUDAPROBE=" + b.probe
	tests := []struct {
		name, host, release, image, libDir string
		compat, compatOrin                 bool
		env                                []string
		want, wantLD, wantDriver, wantPath string
	}{
		{name: "Thor: SM from soc_id, driver version only; Thor's image compat folder is not used",
			host: "thor-jp7", image: "jetpack7.2", libDir: "/usr/lib/aarch64-linux-gnu", compat: true,
			env:  []string{"JETBAKE_SKIP_L4T_CHECK=1", "FAKE_CUDA_MAJOR=10", "FAKE_CUDA_MINOR=1", "FAKE_CUDA_DRIVER_VERSION=13000", "LD_LIBRARY_PATH=/opt/lib"},
			want: "/usr/local/bin/router-110", wantDriver: "soc_id", wantPath: pathFast},
		{name: "R38 Thor whose driver is as new as the image's CUDA passes the SBSA rule",
			host: "thor-jp7", image: "jetpack7.2", libDir: "/usr/lib/aarch64-linux-gnu", compat: true,
			env:  []string{"FAKE_CUDA_MAJOR=11", "FAKE_CUDA_MINOR=0", "FAKE_CUDA_DRIVER_VERSION=13020"},
			want: "/usr/local/bin/router-110", wantDriver: "soc_id", wantPath: pathFast},
		{name: "older driver of the same CUDA major on a Tegra host: the L4T rule decides",
			host: "orin-nano-jp6", image: "jetpack6", libDir: "/usr/lib/aarch64-linux-gnu/nvidia",
			env:  []string{"FAKE_CUDA_DRIVER_VERSION=12020"},
			want: "/usr/local/bin/router-87", wantDriver: "soc_id", wantPath: pathFast},
		{name: "driver disagrees with the L4T release: full query, the override still wins",
			host: "thor-jp7", image: "jetpack7.2", libDir: "/usr/lib/aarch64-linux-gnu", compat: true,
			env:  []string{"JETBAKE_SKIP_L4T_CHECK=1", "JETBAKE_COMPUTE_CAP=11.0", "FAKE_CUDA_DRIVER_VERSION=12090"},
			want: "/usr/local/bin/router-110", wantDriver: "JETBAKE_COMPUTE_CAP", wantPath: pathFull},
		{name: "Orin on R39 with an older 13.x driver uses the image's compat_orin folder",
			host: "orin-nano-jp6", release: "39.2.0", image: "jetpack7.2", libDir: "/usr/lib/aarch64-linux-gnu/nvidia", compat: true, compatOrin: true,
			env:  []string{"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=13010"},
			want: "/usr/local/bin/router-87", wantLD: "/usr/local/cuda/compat_orin", wantDriver: "soc_id", wantPath: pathFast},
		{name: "JetPack 5 keeps libcuda in the tegra folder",
			host: "agx-orin-jp5", image: "jetpack6", libDir: "/usr/lib/aarch64-linux-gnu/tegra",
			env:  []string{"JETBAKE_SKIP_L4T_CHECK=1", "FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=11040"},
			want: "/usr/local/bin/router-87", wantDriver: "soc_id", wantPath: pathFast},
		{name: "desktop GPU through LD_LIBRARY_PATH",
			host: "desktop-rtx3090", image: "desktop", libDir: "/usr/local/nvidia/lib64",
			env:  []string{"LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=9"},
			want: "/usr/local/bin/router-80", wantDriver: "cuda-driver", wantPath: pathFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newSysroot(t, tt.host, tt.image)
			installLibcuda(t, root, tt.libDir)
			if tt.release != "" {
				writeFile(t, root, host.TegraReleasePath, standinRelease(tt.release), 0o644)
			}
			if tt.compat {
				writeFile(t, root, "/usr/local/cuda/compat/libcuda.so.1", "image's forward-compatibility driver", 0o644)
			}
			if tt.compatOrin {
				writeFile(t, root, "/usr/local/cuda/compat_orin/libcuda.so.1", "Orin's forward-compatibility driver", 0o644)
			}
			env := append([]string{probe}, tt.env...)
			r := runIn(t, root, nil, env...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Equal(t, filepath.Join(root, tt.want), r.exec.path)
			ld, _ := environ(r.exec.env).lookup("LD_LIBRARY_PATH")
			if tt.wantLD == "" {
				want, _ := environ(baseEnv(root, env...)).lookup("LD_LIBRARY_PATH")
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
	b := buildBinaries(t)
	tests := []struct {
		name, probe string
		env         []string
		want        string
	}{
		{name: "cuInit fails", probe: b.probe, env: []string{"FAKE_CUDA_INIT_RESULT=100"},
			want: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: cuInit failed: CUDA_ERROR_NO_DEVICE (100)"},
		{name: "insufficient driver, named by the probe's table", probe: b.probe, env: []string{"FAKE_CUDA_INIT_RESULT=35"},
			want: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: cuInit failed: CUDA_ERROR_INSUFFICIENT_DRIVER (35)"},
		{name: "probe missing", probe: "/nonexistent/jetbake-cudaprobe",
			want: "found /usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1 but not /nonexistent/jetbake-cudaprobe (set JETBAKE_CUDAPROBE to its path)"},
		{name: "probe prints something else", probe: script(t, "echo hello"),
			want: `/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: probe printed "hello", not its JSON line: invalid character 'h' looking for beginning of value`},
		{name: "probe leaves out fields", probe: script(t, `echo '{"major":8}'`),
			want: `/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: probe printed "{\"major\":8}" without major, minor and driver_version`},
		{name: "probe fails without a word", probe: script(t, "exit 3"),
			want: `/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1: exit status 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newSysroot(t, "orin-nano-jp6", "jetpack6")
			// Without soc_id there is no fast path: the driver is asked in full.
			require.NoError(t, os.Remove(filepath.Join(root, host.SocIDPath)))
			installLibcuda(t, root, "/usr/lib/aarch64-linux-gnu/nvidia")
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

// script writes a shell script with body and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

// TestProbeTimeout checks that a probe that hangs is stopped when the
// context ends, and says which deadline fired: the caller's 100 ms, which
// came before the probe's own 5 s.
func TestProbeTimeout(t *testing.T) {
	probe := script(t, "exec sleep 30")
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := runProbe(ctx, probe, "/usr/lib/libcuda.so.1", nil)
	require.EqualError(t, err, "no answer within 100ms")
}

// The time a helper had reads as set, not to the nanosecond it was
// measured at.
func TestRoughly(t *testing.T) {
	for d, want := range map[time.Duration]string{
		toolTimeout + 3*time.Microsecond: "5s", 100*time.Millisecond - 4*time.Millisecond: "96ms",
		99*time.Millisecond + 995*time.Microsecond: "100ms", 1254 * time.Millisecond: "1.25s",
	} {
		require.Equal(t, want, roughly(d).String(), "%s", d)
	}
}

// standinRelease is an /etc/nv_tegra_release first line for an L4T version.
func standinRelease(l4t string) string {
	v, err := computecap.ParseL4TVersion(l4t)
	if err != nil {
		panic(err)
	}
	return "# R" + strconv.Itoa(v.Major) + " (release), REVISION: " + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch) +
		", GCID: 1, BOARD: generic, EABI: aarch64, DATE: Mon Jan  1 00:00:00 UTC 2026\n"
}

// TestDriverLoadFailureUnderTheRuntime: the NVIDIA runtime mounted its files
// (nv_tegra_release, the GPU device nodes, libcuda.so.1) but soc_id is not
// visible and the driver library does not load. The sentence names that
// library and its failure, not a missing --runtime nvidia, which is wrong here.
func TestDriverLoadFailureUnderTheRuntime(t *testing.T) {
	b := buildBinaries(t)
	root := newSysroot(t, "agx-orin-container", "jetpack6")
	require.NoError(t, os.RemoveAll(filepath.Join(root, "/sys/devices/soc0")))
	lib := "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1"
	writeFile(t, root, lib, "not a shared object\n", 0o644)
	r := runIn(t, root, nil, "JETBAKE_CUDAPROBE="+b.probe)
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
	r = runIn(t, root, nil, "JETBAKE_CUDAPROBE="+b.probe)
	require.Contains(t, r.stderr, "it was probably started without --runtime nvidia")
}
