package e2e

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
)

func readHostFile(t *testing.T, host runimage.Host, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(host.Root, name))
	require.NoError(t, err)
	return string(data)
}

// needRoot skips a test that makes device nodes under -short, and fails it
// without root.
func needRoot(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("makes device nodes (root): runs without -short (make test)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("mknod needs root: run the tests as root (make test)")
	}
}

// Each fake host has what NVIDIA's runtime shows a container: soc0, the L4T
// release file, its own driver at its JetPack's folder for its GPU (JetPack
// 7.2 keeps one per GPU driver), with the CSV line that names it, the GPU
// device nodes of its line's CSV files (nvgpu's on Orin and Xavier,
// OpenRM's on Thor), and for Orin the Cortex-A78AE's /proc/cpuinfo.
// NoNodesHost has the driver and no node.
func TestWriteHosts(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	got, err := WriteHosts(t.Context(), filepath.Join(t.TempDir(), "cache"), dir)
	require.NoError(t, err)
	require.Len(t, got, len(hosts)+len(DeclaredHostViews())+1)
	require.Equal(t, runimage.Host{Name: "none"}, got["none"], "no root: the machine's own /sys, no L4T file, no driver")

	nvgpu36 := []string{"/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu", "/dev/nvhost-as-gpu", "/dev/nvgpu/igpu0/ctrl", "/dev/nvgpu/igpu0/channel", "/dev/nvmap"}
	tests := []struct {
		name, machine, socID, release, driver string
		orinCPU                               bool
		devices                               []string
	}{
		{name: "orin-jp5.1.2", socID: "35\n", release: "# R35 (release), REVISION: 4.1, ", machine: agxOrin,
			driver: "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1", orinCPU: true,
			devices: []string{"/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu", "/dev/nvhost-as-gpu", "/dev/nvhost-prof-gpu", "/dev/nvmap"}},
		{name: "xavier-jp5.1.2", socID: "25\n", release: "# R35 (release), REVISION: 4.1, ", machine: agxXavier,
			driver: "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1"},
		{name: "orin-jp6.0", socID: "35\n", release: "# R36 (release), REVISION: 3.0, ", machine: agxOrin,
			driver: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1", orinCPU: true},
		{name: "orin-jp6", socID: "35\n", release: "# R36 (release), REVISION: 4.3, ", machine: orinNanoSuper,
			driver: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1", orinCPU: true, devices: nvgpu36},
		{name: "orin-jp6-no-driver", socID: "35\n", release: "# R36 (release), REVISION: 4.3, ", machine: orinNanoSuper, orinCPU: true,
			devices: nvgpu36},
		{name: NoNodesHost, socID: "35\n", release: "# R36 (release), REVISION: 4.3, ", machine: orinNanoSuper,
			driver: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1", orinCPU: true},
		{name: "orin-jp7.2", socID: "35\n", release: "# R39 (release), REVISION: 2.0, ", machine: agxOrin,
			driver: "/opt/nvidia/l4t-gpu-libs/nvgpu/libcuda.so.1.1", orinCPU: true},
		{name: "thor-jp7.0", socID: "38\n", release: "# R38 (release), REVISION: 2.0, ", machine: agxThor,
			driver: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1"},
		{name: "thor-jp7.2", socID: "38\n", release: "# R39 (release), REVISION: 2.0, ", machine: agxThor,
			driver: "/opt/nvidia/l4t-gpu-libs/openrm/libcuda.so.1.1", devices: []string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvmap"}},
		// The declared JetPack 7.3 (DeclaredHostViews): R39's files, revision 3.0.
		{name: "orin-jp7.3", socID: "35\n", release: "# R39 (release), REVISION: 3.0, ", machine: agxOrin,
			driver: "/opt/nvidia/l4t-gpu-libs/nvgpu/libcuda.so.1.1", orinCPU: true,
			devices: []string{"/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu", "/dev/nvgpu/igpu0/ctrl", "/dev/nvmap"}},
		{name: "thor-jp7.3", socID: "38\n", release: "# R39 (release), REVISION: 3.0, ", machine: agxThor,
			driver: "/opt/nvidia/l4t-gpu-libs/openrm/libcuda.so.1.1", devices: []string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvmap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, ok := got[tt.name]
			require.True(t, ok)
			require.Equal(t, tt.name, host.Name)
			require.Equal(t, filepath.Join(dir, tt.name), host.Root)
			require.Empty(t, host.Env, "the driver's answers are compiled in; FAKE_CUDA_* is for injected failures")
			require.Equal(t, tt.machine+"\n", readHostFile(t, host, "sys/devices/soc0/machine"))
			require.Equal(t, tt.socID, readHostFile(t, host, "sys/devices/soc0/soc_id"))
			require.Equal(t, "Tegra\n", readHostFile(t, host, "sys/devices/soc0/family"))
			release := readHostFile(t, host, "etc/nv_tegra_release")
			require.True(t, strings.HasPrefix(release, tt.release), release)
			_, err := os.Stat(filepath.Join(host.Root, "sys", "firmware"))
			require.ErrorIs(t, err, os.ErrNotExist, "the device tree is masked, as in a default docker run")
			if tt.devices != nil {
				require.Equal(t, tt.devices, host.Devices)
			}
			for _, d := range host.Devices {
				var st syscall.Stat_t
				require.NoError(t, syscall.Stat(filepath.Join(host.Root, d), &st), d)
				require.Equal(t, uint32(syscall.S_IFCHR), st.Mode&syscall.S_IFMT, "%s is a character device", d)
				require.Equal(t, uint64(1<<8|3), uint64(st.Rdev), d)
			}
			if tt.name == NoNodesHost {
				require.Empty(t, host.Devices)
				_, err := os.Stat(filepath.Join(host.Root, "dev"))
				require.ErrorIs(t, err, os.ErrNotExist)
			} else {
				require.NotEmpty(t, host.Devices, "every Jetson's runtime mounts its GPU's nodes")
			}
			if tt.driver == "" {
				require.Empty(t, host.Libs)
			} else {
				require.Equal(t, []runimage.HostLib{{Source: filepath.Join(host.Root, tt.driver), Path: tt.driver, Links: []string{"libcuda.so.1"}}}, host.Libs)
				f, err := elf.Open(host.Libs[0].Source)
				require.NoError(t, err)
				soname, err := f.DynString(elf.DT_SONAME)
				require.NoError(t, err)
				require.Equal(t, []string{"libcuda.so.1"}, soname)
				require.Equal(t, elf.EM_AARCH64, f.Machine)
				f.Close()
				require.Equal(t, "lib, "+tt.driver+"\nsym, "+filepath.Dir(tt.driver)+"/libcuda.so.1\n",
					readHostFile(t, host, csvDir+"/drivers.csv"), "the CSV line NVIDIA's runtime reads")
			}
			if !tt.orinCPU {
				require.Empty(t, host.CPUInfo)
				return
			}
			features, ok := tei.FeaturesFromCPUInfo(readHostFile(t, host, "proc/cpuinfo"))
			require.True(t, ok)
			require.Contains(t, features, "asimddp")
			require.NotContains(t, features, "sve", "Cortex-A78AE has no SVE")
		})
	}
	require.NotEqual(t, got["orin-jp6"].Libs[0].Source, got["thor-jp7.2"].Libs[0].Source)
	orin, err := os.ReadFile(got["orin-jp6"].Libs[0].Source)
	require.NoError(t, err)
	thor, err := os.ReadFile(got["thor-jp7.2"].Libs[0].Source)
	require.NoError(t, err)
	require.NotEqual(t, orin, thor, "each host's driver has its own answers compiled in")
}

// A host without an L4T version gets no release file and no driver.
func TestFakeHostWithoutL4T(t *testing.T) {
	root := filepath.Join(t.TempDir(), "plain")
	h := FakeHost{Name: "plain", Machine: "Board", SocID: 1}
	host, err := h.write(t.Context(), t.TempDir(), root)
	require.NoError(t, err)
	require.Empty(t, host.Libs)
	_, err = os.Stat(filepath.Join(root, "etc", "nv_tegra_release"))
	require.ErrorIs(t, err, os.ErrNotExist)
	data, err := os.ReadFile(filepath.Join(root, "sys/devices/soc0/soc_id"))
	require.NoError(t, err)
	require.Equal(t, "1\n", string(data))
}

func TestWriteHostsFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := WriteHosts(t.Context(), t.TempDir(), file)
	require.Error(t, err)
	require.Contains(t, err.Error(), "fake host orin-jp5.1.2")
}
