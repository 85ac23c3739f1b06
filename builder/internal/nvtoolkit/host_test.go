package nvtoolkit

import (
	"debug/elf"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// elfOf reads the machine and soname of the shared object at path.
func elfOf(t *testing.T, path string) (elf.Machine, string) {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	names, err := f.DynString(elf.DT_SONAME)
	require.NoError(t, err)
	require.Len(t, names, 1)
	return f.Machine, names[0]
}

// A Thor on JetPack 7.2 as the runtime reads it: its own driver folder of
// R39's shared CSV files, OpenRM's device nodes as character devices 1:3, the
// links, nv_tegra_release, the soc0 view and the x86 twin of its driver.
func TestWriteHost(t *testing.T) {
	if testing.Short() {
		t.Skip("makes device nodes (root): runs without -short (make test)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("mknod needs root: run the tests as root (make test)")
	}
	dir := t.TempDir()
	h, err := writeHost(t.Context(), filepath.Join(dir, "thor"), filepath.Join(dir, "cache"), HostSpec{
		Name: "thor", L4T: "39.2.0", SocID: 38, SocFamily: "Tegra", Machine: "NVIDIA Jetson AGX Thor Developer Kit",
		GPU: computecap.Capability{Major: 11}, DriverCUDA: computecap.CUDAVersion{Major: 13, Minor: 2}})
	require.NoError(t, err)
	require.Equal(t, "Thor", h.GPUFamily)
	require.Equal(t, "/opt/nvidia/l4t-gpu-libs/openrm/libcuda.so.1", h.Libcuda)
	require.Equal(t, []string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvmap"}, h.Devices)

	machine, soname := elfOf(t, filepath.Join(h.Root, h.Libcuda))
	require.Equal(t, elf.EM_AARCH64, machine)
	require.Equal(t, "libcuda.so.1", soname, "the runtime names the links after it")
	machine, _ = elfOf(t, filepath.Join(h.X86Driver, "libcuda.so.1"))
	require.NotEqual(t, elf.EM_AARCH64, machine, "the runtime's own process loads this one")
	_, err = os.Stat(filepath.Join(h.Root, "/opt/nvidia/l4t-gpu-libs/nvgpu"))
	require.ErrorIs(t, err, os.ErrNotExist, "Orin's folder is not on a Thor")

	for _, d := range h.Devices {
		var st syscall.Stat_t
		require.NoError(t, syscall.Stat(filepath.Join(h.Root, d), &st))
		require.Equal(t, uint32(syscall.S_IFCHR), st.Mode&syscall.S_IFMT, d)
		require.Equal(t, uint64(1<<8|3), st.Rdev, d)
	}
	read := func(p string) string {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		return string(data)
	}
	require.Contains(t, read(filepath.Join(h.Root, "etc/nv_tegra_release")), "# R39 (release), REVISION: 2.0,")
	require.Equal(t, "38\n", read(filepath.Join(h.SysDevices, "soc0/soc_id")))
	require.Equal(t, "Tegra\n", read(filepath.Join(h.SysDevices, "soc0/family")))
	require.Contains(t, read(filepath.Join(h.Root, CSVFolder, "drivers.csv")), "lib, /opt/nvidia/l4t-gpu-libs/nvgpu/libcuda.so.1.1\n",
		"one CSV set for Orin and Thor: the other GPU's rows only get a warning")
	require.Equal(t, "lib, /etc/nv_tegra_release\n", read(filepath.Join(h.Root, CSVFolder, "l4t.csv")))

	_, err = writeHost(t.Context(), filepath.Join(dir, "old"), filepath.Join(dir, "cache"), HostSpec{Name: "old", L4T: "32.7.1",
		GPU: computecap.Capability{Major: 5, Minor: 3}})
	require.ErrorContains(t, err, "no CSV table for L4T R32")
}
