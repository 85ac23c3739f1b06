package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// Messages shared by several cases.
const (
	orinNanoModel = "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
	skipAdvice    = ", or set JETBAKE_SKIP_L4T_CHECK=1 to try this one anyway.\n"
	tagPrefix     = "ghcr.io/jetbake/text-embeddings-router:1.8.2-"
	upgrade72     = ", or upgrade the host to JetPack 7.2 (L4T 39.2.0) or later"
)

func TestRunChoosesBinary(t *testing.T) {
	tests := []struct {
		name, host, image string
		env               []string
		args              []string
		want              string
		wantArgs          []string
	}{
		{name: "Orin Nano JetPack 6 image, nvidia-smi answers [N/A]", host: "orin-nano-jp6", image: "jetpack6",
			args: []string{"--model-id", "BAAI/bge-small-en-v1.5"}, want: "/usr/local/bin/router-87",
			wantArgs: []string{"--model-id", "BAAI/bge-small-en-v1.5"}},
		{name: "Orin Nano JetPack 7.2 image with the L4T check skipped", host: "orin-nano-jp6", image: "jetpack7.2",
			env: []string{"JETBAKE_SKIP_L4T_CHECK=1"}, want: "/usr/local/bin/router-87"},
		{name: "Thor JetPack 7.2 image with the L4T check skipped", host: "thor-jp7", image: "jetpack7.2",
			env: []string{"JETBAKE_SKIP_L4T_CHECK=true"}, want: "/usr/local/bin/router-110"},
		{name: "Thor override 10.1 picks the 11.0 binary", host: "thor-jp7", image: "jetpack7.2",
			env: []string{"JETBAKE_SKIP_L4T_CHECK=1", "JETBAKE_COMPUTE_CAP=10.1"}, want: "/usr/local/bin/router-110"},
		{name: "override wins over the device tree", host: "orin-nano-jp6", image: "jetpack7.2",
			env: []string{"JETBAKE_SKIP_L4T_CHECK=1", "JETBAKE_COMPUTE_CAP=sm_110"}, want: "/usr/local/bin/router-110"},
		{name: "desktop 8.6 runs the 8.0 binary", host: "desktop-rtx3090", image: "desktop",
			args: []string{"--port", "80"}, want: "/usr/local/bin/router-80", wantArgs: []string{"--port", "80"}},
		{name: "only a first --explain is the entrypoint's", host: "orin-nano-jp6", image: "jetpack6",
			args: []string{"--port", "80", "--explain"}, want: "/usr/local/bin/router-87",
			wantArgs: []string{"--port", "80", "--explain"}},
		{name: "no nvidia-smi on JetPack 5, soc_id answers", host: "agx-orin-jp5", image: "jetpack6",
			env: []string{"JETBAKE_SKIP_L4T_CHECK=1"}, want: "/usr/local/bin/router-87"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, tt.host, tt.image)
			r := runIn(t, root, tt.args, tt.env...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Empty(t, r.stderr)
			require.NotNil(t, r.exec)
			require.Equal(t, filepath.Join(root, tt.want), r.exec.path)
			require.Equal(t, append([]string{tt.want}, tt.wantArgs...), r.exec.argv)
			require.Equal(t, eptest.BaseEnv(root, tt.env...), r.exec.env)
		})
	}
}

func TestRunFailures(t *testing.T) {
	tests := []struct {
		name, host, image string
		env               []string
		want              string
	}{
		{name: "JetPack 7.2 image on a JetPack 6 host", host: "orin-nano-jp6", image: "jetpack7.2",
			want: "this image is for JetPack 7.2 (L4T R39.2.0, CUDA 13.2) and needs a driver for CUDA 13.2 or a later 13.x, " +
				"but the host has a driver for CUDA 12.6 on L4T R36.4.3 (JetPack 6.2): use " + tagPrefix + "jetpack6.2 instead" +
				upgrade72 + skipAdvice},
		{name: "JetPack 6 image on a JetPack 5 host, no family", host: "agx-orin-jp5", image: "jetpack6",
			want: "this image is for JetPack 6.2 (L4T R36.4.3, CUDA 12.6) and needs L4T R36.4 or a later R36 release, " +
				"but the host has L4T R35.4.1 (JetPack 5.1.2): use a JetPack 5.1.2 image instead, " +
				"or upgrade the host to JetPack 6.1 (L4T 36.4.0) or later" + skipAdvice},
		{name: "JetPack 7.2 image on a JetPack 5 host", host: "agx-orin-jp5", image: "jetpack7.2",
			want: "this image is for JetPack 7.2 (L4T R39.2.0, CUDA 13.2) and needs a driver for CUDA 13.2 or a later 13.x, " +
				"but the host has a driver for CUDA 11.4 on L4T R35.4.1 (JetPack 5.1.2): use " + tagPrefix + "jetpack5.1 instead" +
				upgrade72 + skipAdvice},
		{name: "JetPack 6 image on Thor", host: "thor-jp7", image: "jetpack6",
			want: "this image is for JetPack 6.2 (L4T R36.4.3, CUDA 12.6) and needs L4T R36.4 or a later R36 release, " +
				"but the host has L4T R38.2.0 (JetPack 7.0): use a JetPack 7.0 image instead" + skipAdvice},
		{name: "JetPack 7.2 image on a JetPack 7.0 Thor", host: "thor-jp7", image: "jetpack7.2",
			want: "this image is for JetPack 7.2 (L4T R39.2.0, CUDA 13.2) and needs a driver for CUDA 13.2 or a later 13.x, " +
				"but the host has a driver for CUDA 13.0 on L4T R38.2.0 (JetPack 7.0): use " + tagPrefix + "jetpack7.0 instead" +
				upgrade72 + skipAdvice},
		{name: "desktop image on an Orin", host: "orin-nano-jp6", image: "desktop",
			want: "this image has no text-embeddings-router binary for the GPU found, Jetson Orin, SM 8.7 (" + orinNanoModel +
				", from soc_id); it holds sm_80 (/usr/local/bin/router-80).\n"},
		{name: "Jetson image on a desktop GPU", host: "desktop-rtx3090", image: "jetpack6",
			want: "this image has no text-embeddings-router binary for the GPU found, GPU with SM 8.6 (from nvidia-smi); it holds sm_87 (/usr/local/bin/router-87).\n"},
		{name: "Jetson image with family on a desktop GPU", host: "desktop-rtx3090", image: "jetpack7.2",
			want: "this image has no text-embeddings-router binary for the GPU found, GPU with SM 8.6 (from nvidia-smi); " +
				"it holds sm_87 (/usr/local/bin/router-87), sm_110 (/usr/local/bin/router-110). No other image of its family has one for this host.\n"},
		{name: "Thor override on a JetPack 6 image", host: "orin-nano-jp6", image: "jetpack6",
			env: []string{"JETBAKE_COMPUTE_CAP=11.0"},
			want: "this image has no text-embeddings-router binary for the GPU found, Jetson Thor, SM 11.0 (" + orinNanoModel +
				", from JETBAKE_COMPUTE_CAP); it holds sm_87 (/usr/local/bin/router-87).\n"},
		{name: "no runtime, nothing visible", host: "no-runtime", image: "jetpack6",
			want: "no NVIDIA GPU is visible in this container: it was probably started without --runtime nvidia " +
				"(or --device nvidia.com/gpu=all with CDI). Looked at: JETBAKE_COMPUTE_CAP (not set), cuda-driver (libcuda.so.1 not found), " +
				"nvidia-smi (not found), device-tree (absent), soc_id (absent), /etc/nv_tegra_release (absent), GPU device nodes (none). " +
				"Run with --explain for details, or set JETBAKE_COMPUTE_CAP (such as 8.7) to choose a binary by hand.\n"},
		{name: "Jetson without the runtime", host: "jetson-no-runtime", image: "jetpack6",
			want: "this is a Jetson Orin, SM 8.7 (" + orinNanoModel + ", from soc_id), but the container has no access to its GPU: " +
				"it was probably started without --runtime nvidia (or --device nvidia.com/gpu=all with CDI). Looked at: " +
				"JETBAKE_COMPUTE_CAP (not set), soc_id (8.7), cuda-driver (libcuda.so.1 not found), " +
				"/etc/nv_tegra_release (absent), GPU device nodes (none). Run with --explain for details.\n"},
		{name: "Jetson with the runtime's release file but no device node", host: "agx-orin-no-nodes", image: "jetpack6",
			want: "this is a Jetson Orin, SM 8.7 (NVIDIA Jetson AGX Orin Developer Kit, from soc_id) and the NVIDIA runtime's files are in " +
				"this container (/etc/nv_tegra_release), but not the device nodes its GPU driver (nvgpu) needs, /dev/nvhost-ctrl-gpu " +
				"(or /dev/nvgpu/igpu0/ctrl) and /dev/nvmap, without which CUDA reaches no GPU: start the container with --runtime nvidia " +
				"(or --device nvidia.com/gpu=all with CDI), which mounts them, and if it was, check that the CSV files in " +
				"/etc/nvidia-container-runtime/host-files-for-container.d list them. Run with --explain for details.\n"},
		{name: "override that is not a capability", host: "orin-nano-jp6", image: "jetpack6", env: []string{"JETBAKE_COMPUTE_CAP=orin"},
			want: `JETBAKE_COMPUTE_CAP: compute capability "orin" is not valid: want forms like 8.7, 87, sm_87 or compute_87; ` +
				"set it like JETBAKE_COMPUTE_CAP=8.7, or unset it to detect the GPU.\n"},
		{name: "no image description", host: "orin-nano-jp6",
			want: "/etc/jetbake/image.json is missing: this image was not built by jetbake, or the file was removed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, tt.host, tt.image)
			r := runIn(t, root, []string{"--port", "80"}, tt.env...)
			require.Equal(t, 1, r.code)
			require.Nil(t, r.exec)
			require.Empty(t, r.stdout)
			require.Equal(t, "jetbake-entrypoint: "+tt.want, r.stderr)
		})
	}
}

func TestRunImageErrors(t *testing.T) {
	const fix = "; fix: rebuild the image with 'jetbake build', which writes this file"
	const file = "/etc/jetbake/image.json:"
	tests := []struct {
		name, json, want string
	}{
		{"garbled", `{"schema_version": 1,`,
			file + "1:22: $: is not valid JSON: the file ends early" + fix},
		{"newer schema", `{"schema_version": 3, "router": "r", "targets": [{"sm": "8.7", "path": "/usr/local/bin/r"}]}`,
			file + "1:20: schema_version: 3: this entrypoint reads schema 1 to 2" + fix + " with a matching jetbake"},
		{"no targets", `{"schema_version": 1, "router": "r"}`,
			"/etc/jetbake/image.json: targets: is empty: the image holds no router binary" + fix},
		{"bad sm", `{"schema_version": 1, "router": "r", "targets": [{"sm": "8.7", "path": "/usr/local/bin/a"}, {"sm": "orin", "path": "/usr/local/bin/b"}]}`,
			file + "1:100: targets[1].sm: \"orin\": is not a compute capability such as 8.7" + fix},
		{"bad cuda", `{"schema_version": 1, "router": "r", "cuda": "twelve", "targets": [{"sm": "8.7", "path": "/usr/local/bin/a"}]}`,
			file + "1:46: cuda: \"twelve\": is not a CUDA version such as 12.6" + fix},
		{"bad l4t", `{"schema_version": 1, "router": "r", "l4t": "R36", "targets": [{"sm": "8.7", "path": "/usr/local/bin/a"}]}`,
			file + "1:45: l4t: \"R36\": is not an L4T release such as 36.4.3" + fix},
		{"unknown jetpack without l4t", `{"schema_version": 1, "router": "r", "jetpack": "9.9", "targets": [{"sm": "8.7", "path": "/usr/local/bin/a"}]}`,
			file + "1:49: jetpack: \"9.9\": is not a JetPack release this entrypoint knows, and l4t is empty" + fix},
		// An image.json that leads out of the image's binaries is refused,
		// whoever wrote it: the entrypoint execs nothing outside /usr/local/bin.
		{"target path that leaves the folder", `{"schema_version": 1, "router": "r", "targets": [{"sm": "8.7", "path": "/usr/local/bin/../../../outside/escape.sh"}]}`,
			file + "1:72: targets[0].path: \"/usr/local/bin/../../../outside/escape.sh\": is not a clean path of a file in /usr/local/bin: " +
				"the entrypoint runs only the image's own router binaries" + fix},
		{"target path elsewhere", `{"schema_version": 1, "router": "r", "targets": [{"sm": "8.7", "path": "/bin/sh"}]}`,
			file + "1:72: targets[0].path: \"/bin/sh\": is not a clean path of a file in /usr/local/bin: " +
				"the entrypoint runs only the image's own router binaries" + fix},
		{"wrong type", `{"schema_version": "1"}`,
			file + "1:20: schema_version: must be int, not string" + fix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, "orin-nano-jp6", "")
			eptest.WriteFile(t, root, "/etc/jetbake/image.json", tt.json, 0o644)
			r := runIn(t, root, nil)
			require.Equal(t, 1, r.code)
			require.Nil(t, r.exec)
			require.Equal(t, "jetbake-entrypoint: "+tt.want+"\n", r.stderr)
		})
	}
}

// TestRunRefusesNonRegularFiles puts a named pipe where the entrypoint
// reads a file. Opening a FIFO for reading blocks until a writer comes,
// where no signal can end it; the entrypoint must answer at once instead.
func TestRunRefusesNonRegularFiles(t *testing.T) {
	fifo := func(t *testing.T, root, p string) {
		t.Helper()
		full := filepath.Join(root, p)
		require.NoError(t, os.Remove(full))
		require.NoError(t, syscall.Mkfifo(full, 0o644))
	}
	t.Run("image.json", func(t *testing.T) {
		root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6")
		fifo(t, root, "/etc/jetbake/image.json")
		r := runWithin(t, root, nil)
		require.Equal(t, 1, r.code)
		require.Equal(t, "jetbake-entrypoint: /etc/jetbake/image.json is a named pipe (FIFO), not a regular file: "+
			"this image was not built by jetbake, or something is mounted over the file\n", r.stderr)
	})
	t.Run("nv_tegra_release", func(t *testing.T) {
		root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6")
		fifo(t, root, "/etc/nv_tegra_release")
		r := runWithin(t, root, []string{"--explain"})
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "/etc/nv_tegra_release is not the file the NVIDIA runtime mounts (a named pipe (FIFO))")
	})
}

// runWithin is runIn, failed when the entrypoint does not return within
// ten seconds (a hang on a FIFO would never return).
func runWithin(t *testing.T, root string, args []string, env ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- runIn(t, root, args, env...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the entrypoint did not return: it blocks on a named pipe")
		return result{}
	}
}

func TestRunExecFailure(t *testing.T) {
	root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), nil, eptest.BaseEnv(root), &stdout, &stderr, func(string, []string, []string) error {
		return errNoSuchFile{}
	})
	require.Equal(t, 1, code)
	require.Equal(t, "jetbake-entrypoint: cannot start /usr/local/bin/router-87, the binary chosen for Jetson Orin, SM 8.7: no such file or directory\n", stderr.String())
}

// errNoSuchFile stands for the ENOENT of a binary missing from the image.
type errNoSuchFile struct{}

func (errNoSuchFile) Error() string { return "no such file or directory" }

// TestRunCutsLongValues gives the entrypoint a 100,000-character override:
// the message quotes the start and states the length.
func TestRunCutsLongValues(t *testing.T) {
	long := strings.Repeat("8.7", 100000/3)
	root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6")
	r := runIn(t, root, nil, "JETBAKE_COMPUTE_CAP="+long)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `compute capability "`+long[:80]+`"... (99999 bytes) is not valid`)
	require.Less(t, len(r.stderr), 400)
}

// TestRunMissingDeviceNodes: a Jetson container with the NVIDIA runtime's
// files (the L4T release file, libcuda.so.1) but not the device nodes of
// its GPU's driver is refused on the fast path, which asks the driver
// nothing that needs them, with the sentence that names the nodes and the
// fix, though the driver answered its version; the nodes of the other
// driver do not count; the override still chooses by hand; --explain shows
// the check.
func TestRunMissingDeviceNodes(t *testing.T) {
	const orinLib = "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1"
	const thorLib = "/usr/lib/aarch64-linux-gnu/libcuda.so.1"
	thorModel := "NVIDIA Jetson AGX Thor Developer Kit"
	probe := "JETBAKE_CUDAPROBE=" + eptest.Build(t).CUDAProbe
	tests := []struct {
		name, host, image, lib string
		remove, env            []string
		want                   string
	}{
		{name: "Orin with the driver's libraries but no device nodes", host: "agx-orin-no-nodes", image: "jetpack6", lib: orinLib,
			want: missingNodes("NVIDIA Jetson AGX Orin Developer Kit", orinLib)},
		{name: "Thor without /dev/nvidia0, nvgpu's /dev/nvmap does not count", host: "thor-jp7", image: "jetpack7.2", lib: thorLib,
			remove: []string{"/dev/nvidia0"}, env: []string{"JETBAKE_SKIP_L4T_CHECK=1", "FAKE_CUDA_DRIVER_VERSION=13000"},
			want: "this is a Jetson Thor, SM 11.0 (" + thorModel + ", from soc_id) and the NVIDIA runtime's files are in this container " +
				"(/etc/nv_tegra_release, " + thorLib + ", GPU device nodes /dev/nvmap, /dev/nvidiactl), but not the device nodes its GPU driver (OpenRM) " +
				"needs, /dev/nvidia0, without which CUDA reaches no GPU: start the container with --runtime nvidia " +
				"(or --device nvidia.com/gpu=all with CDI), which mounts them, and if it was, check that the CSV files in " +
				"/etc/nvidia-container-runtime/host-files-for-container.d list them. Run with --explain for details.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, tt.host, tt.image)
			eptest.InstallLibcuda(t, root, filepath.Dir(tt.lib))
			for _, p := range tt.remove {
				require.NoError(t, os.Remove(filepath.Join(root, p)))
			}
			if tt.host == "thor-jp7" {
				eptest.WriteFile(t, root, "/dev/nvmap", "", 0o644)
			}
			r := runIn(t, root, []string{"--port", "80"}, append(tt.env, probe)...)
			require.Equal(t, 1, r.code)
			require.Nil(t, r.exec)
			require.Equal(t, "jetbake-entrypoint: "+tt.want, r.stderr)
		})
	}

	root := eptest.NewSysroot(t, "agx-orin-no-nodes", "jetpack6")
	eptest.InstallLibcuda(t, root, filepath.Dir(orinLib))
	r := runIn(t, root, nil, probe, "JETBAKE_COMPUTE_CAP=8.7")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, filepath.Join(root, "/usr/local/bin/router-87"), r.exec.path, "the override chooses by hand")

	e := explainRun(t, root, probe)
	require.Equal(t, &detect.NodeCheck{Driver: "nvgpu", Needs: []string{"/dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl)", "/dev/nvmap"},
		Missing: []string{"/dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl)", "/dev/nvmap"},
		Result:  "refused: the CUDA driver would load and reach no GPU"}, e.DeviceNodes)
	require.Equal(t, "fast", e.Path)
	require.Empty(t, e.Choice)
	e = explainRun(t, eptest.NewSysroot(t, "agx-orin-container", "jetpack6"))
	require.Equal(t, "ok: every node is there", e.DeviceNodes.Result)
	require.Empty(t, e.DeviceNodes.Missing)
}
