package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// tree writes files (path -> content) under a new root.
func tree(t *testing.T, files map[string]string) Root {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return Root(root)
}

const orinRelease = "# R36 (release), REVISION: 4.7, GCID: 42132812, BOARD: generic, EABI: aarch64, DATE: Tue Sep  9 22:38:43 UTC 2025\n"

// A default `docker run --runtime nvidia` on an AGX Orin: the device tree
// masked, soc0 and the runtime's files visible.
func TestReadContainerView(t *testing.T) {
	root := tree(t, map[string]string{
		SocIDPath: "35\n", SocFamilyPath: "Tegra\n", SocMachinePath: "NVIDIA Jetson AGX Orin Developer Kit\n",
		TegraReleasePath: orinRelease, "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1": "driver",
		CompatDir + "/libcuda.so.1": "the image's own", "/usr/local/cuda/compat_orin/libcuda.so.1": "Orin's",
	})
	tab := computecap.DefaultTable()
	f := Read(root, tab, Options{})
	require.True(t, f.HasSoC)
	require.Equal(t, FromSocID, f.SoCFrom)
	require.Equal(t, "tegra234", f.SoC.Name)
	require.False(t, f.HasDTSoC)
	require.Empty(t, f.CompatiblePath, "the device tree is masked")
	require.Equal(t, "NVIDIA Jetson AGX Orin Developer Kit", f.BoardName())
	require.Equal(t, computecap.L4TVersion{Major: 36, Minor: 4, Patch: 7}, f.L4T)
	require.Equal(t, "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1", f.Libcuda)
	class, known, fromSoC := f.DeviceClass()
	require.Equal(t, "Jetson AGX Orin", class)
	require.True(t, known)
	require.False(t, fromSoC)
	require.Equal(t, []string{"/usr/local/cuda/compat_orin"}, PresentCompat(tab, root))

	needs, err := Needs(tab, ImageFields{L4T: "36.4.3", CUDA: "12.6"}, nil)
	require.NoError(t, err)
	st := f.State()
	st.Driver, st.HasDriver = computecap.CUDAVersion{Major: 12, Minor: 6}, true
	v := tab.CheckHost(needs, st)
	require.True(t, v.OK, v.Reason())
	needs, err = Needs(tab, ImageFields{L4T: "39.2.0", CUDA: "13.2"}, nil)
	require.NoError(t, err)
	v = tab.CheckHost(needs, f.State())
	require.False(t, v.OK)
	require.True(t, v.DriverFromTable)
	require.Equal(t, "JetPack 7.2 (L4T 39.2.0)", v.Upgrade)
}

func TestReadDeviceClassFallbacks(t *testing.T) {
	tab := computecap.DefaultTable()
	f := Read(tree(t, map[string]string{SocIDPath: "38\n"}), tab, Options{})
	class, known, fromSoC := f.DeviceClass()
	require.Equal(t, "Jetson Thor", class, "nothing but soc_id: the SoC's class")
	require.True(t, known)
	require.True(t, fromSoC)

	f = Read(tree(t, map[string]string{SocIDPath: "35\n", SocMachinePath: "Custom carrier 42\n"}), tab, Options{})
	class, known, _ = f.DeviceClass()
	require.Equal(t, "Jetson Orin (other module)", class)
	require.False(t, known)

	f = Read(tree(t, map[string]string{SocIDPath: "36\n", SocFamilyPath: "Tegra\n"}), tab, Options{})
	require.False(t, f.HasSoC, "T241 Grace is not a Jetson")
	f = Read(tree(t, map[string]string{SocIDPath: "35\n", SocFamilyPath: "Snapdragon\n"}), tab, Options{})
	require.False(t, f.HasSoC)

	f = Read(tree(t, map[string]string{SocIDPath: "38\n",
		"/proc/device-tree/compatible": "nvidia,p3737-0000+p3701-0005\x00nvidia,tegra234\x00"}), tab, Options{})
	require.True(t, f.Conflict)
	require.Equal(t, FromSocID, f.SoCFrom)

	f = Read(tree(t, map[string]string{"/opt/lib/libcuda.so.1": "x", TegraReleasePath: "garbage\n"}), tab,
		Options{LibraryPath: "relative:/opt/lib"})
	require.Equal(t, "/opt/lib/libcuda.so.1", f.Libcuda)
	require.True(t, f.TegraRelease)
	require.False(t, f.HasL4T)
	require.EqualError(t, f.L4TErr, `first line "garbage" does not start with "# R<major>"`)
}

// Read takes the device tree's SoC from the first SoC entry of compatible,
// the chip itself, with Table.SoCFromCompatible: a Thor whose compatible
// also lists Orin is a Thor, as its soc_id says, not a conflict.
func TestReadDeviceTreeSoCIsTheFirst(t *testing.T) {
	f := Read(tree(t, map[string]string{SocIDPath: "38\n", SocFamilyPath: "Tegra\n",
		DeviceTreeDir + "/compatible": "nvidia,p3834-0008\x00nvidia,tegra264\x00nvidia,tegra234\x00"}),
		computecap.DefaultTable(), Options{})
	require.True(t, f.HasDTSoC)
	require.Equal(t, "tegra264", f.DTSoC.Name)
	require.False(t, f.Conflict, "soc_id 38 and the device tree both name tegra264")
}

func TestNeedsErrors(t *testing.T) {
	tab := computecap.DefaultTable()
	n, err := Needs(tab, ImageFields{JetPack: "6.2", CUDA: "12.6"}, []string{"/x"})
	require.NoError(t, err)
	require.Equal(t, 36, n.L4T.Major)
	require.Equal(t, []string{"/x"}, n.CompatDirs)
	_, err = Needs(tab, ImageFields{JetPack: "9.9"}, nil)
	require.EqualError(t, err, `jetpack "9.9" is not a JetPack release this table knows, and l4t is empty`)
	_, err = Needs(tab, ImageFields{L4T: "36.x"}, nil)
	require.Error(t, err)
	_, err = Needs(tab, ImageFields{L4T: "36.4.3", CUDA: "twelve"}, nil)
	require.Error(t, err)
}

func FuzzParseTegraRelease(f *testing.F) {
	f.Add([]byte(orinRelease))
	f.Add([]byte("# R38 (release), REVISION: 2.0\n"))
	f.Add([]byte("# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64, DATE: Sun Mar 19 15:19:21 UTC 2023\n"))
	f.Add([]byte("# R36 (release), REVISION: 4"))
	f.Add([]byte("# R99999 (release), REVISION: 1.2.3.4"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseTegraRelease(data)
		if err != nil {
			return
		}
		require.Positive(t, v.Major, "parsed %q", data)
		back, err := computecap.ParseL4TVersion(v.String())
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}

// Find looks in each absolute folder once, in order, and takes the first
// file that fits: a file that is not executable is passed over for an
// executable one, as nvidia-smi is searched in the entrypoint.
func TestRootFind(t *testing.T) {
	root := tree(t, map[string]string{"/a/tool": "not executable", "/c/tool": "x"})
	require.NoError(t, os.Chmod(root.Path("/c/tool"), 0o755))
	dirs := []string{"", "rel", "/a", "/b", "/a", "/c", "/d"}
	got, looked := root.Find("tool", dirs, Executable)
	require.Equal(t, "/c/tool", got)
	require.Equal(t, []string{"/a", "/b", "/c"}, looked)
	got, _ = root.Find("tool", dirs, nil)
	require.Equal(t, "/a/tool", got, "any file fits without a test")
	got, looked = root.Find("other", dirs, nil)
	require.Empty(t, got)
	require.Equal(t, []string{"/a", "/b", "/c", "/d"}, looked)
}

// FindLibcuda finds libcuda.so.1 where NVIDIA's CSV runtime mounts it on
// each JetPack line (the lib and sym rows of its CSV files; see
// builder/internal/nvtoolkit/jetpack.go for their sources).
func TestFindLibcudaOnEachJetPackLine(t *testing.T) {
	for line, path := range map[string]string{
		"JetPack 5 (R35)":               "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1",
		"JetPack 6 (R36)":               "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1",
		"JetPack 7.0, 7.1 (R38)":        "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1",
		"JetPack 7.2 on Orin (R39)":     "/opt/nvidia/l4t-gpu-libs/nvgpu/libcuda.so.1",
		"JetPack 7.2 on Thor (R39)":     "/opt/nvidia/l4t-gpu-libs/openrm/libcuda.so.1",
		"a dGPU host or an old runtime": "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
	} {
		got, looked := FindLibcuda(tree(t, map[string]string{path: "x"}), computecap.DefaultTable(), "")
		require.Equal(t, path, got, "%s: looked in %v", line, looked)
	}
	// JetPack 6's CSV list links .../tegra to .../nvidia: the newer folder is named.
	got, _ := FindLibcuda(tree(t, map[string]string{"/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1": "x",
		"/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1": "x"}), computecap.DefaultTable(), "")
	require.Equal(t, "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1", got)
}
