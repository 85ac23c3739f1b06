package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// The GPU device nodes a container shows, and those its Jetson's driver
// needs that are missing: nvgpu's on an Orin (either name of its control
// node), OpenRM's on a Thor, whatever L4T line the release file names (or
// none); a folder is not a node; a machine that is not a Jetson is not
// judged.
func TestReadGPUNodes(t *testing.T) {
	tab := computecap.DefaultTable()
	const thorRelease = "# R38 (release), REVISION: 2.0, GCID: 1, BOARD: generic, EABI: aarch64\n"
	tests := []struct {
		name    string
		files   map[string]string
		present []string
		driver  string
		missing []string
	}{
		{name: "Orin, JetPack 6, the legacy control node", files: map[string]string{SocIDPath: "35\n", TegraReleasePath: orinRelease,
			"/dev/nvhost-ctrl-gpu": "", "/dev/nvmap": ""}, present: []string{"/dev/nvhost-ctrl-gpu", "/dev/nvmap"}, driver: "nvgpu"},
		{name: "Orin, the new control node only, no release file", files: map[string]string{SocIDPath: "35\n",
			"/dev/nvgpu/igpu0/ctrl": "", "/dev/nvmap": ""}, present: []string{"/dev/nvgpu/igpu0/ctrl", "/dev/nvmap"}, driver: "nvgpu"},
		{name: "Orin without nodes", files: map[string]string{SocIDPath: "35\n", TegraReleasePath: orinRelease,
			"/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1": "driver"}, driver: "nvgpu",
			missing: []string{"/dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl)", "/dev/nvmap"}},
		{name: "Orin with a folder at /dev/nvmap", files: map[string]string{SocIDPath: "35\n", "/dev/nvhost-ctrl-gpu": "", "/dev/nvmap/x": ""},
			present: []string{"/dev/nvhost-ctrl-gpu"}, driver: "nvgpu", missing: []string{"/dev/nvmap"}},
		{name: "Thor, JetPack 7, nvgpu's nodes are not OpenRM's", files: map[string]string{SocIDPath: "38\n", TegraReleasePath: thorRelease,
			"/dev/nvidiactl": "", "/dev/nvmap": ""}, present: []string{"/dev/nvmap", "/dev/nvidiactl"}, driver: "OpenRM",
			missing: []string{"/dev/nvidia0"}},
		{name: "a desktop GPU: no Jetson, nothing judged", files: map[string]string{"/dev/nvidiactl": "", "/dev/nvidia0": ""},
			present: []string{"/dev/nvidiactl", "/dev/nvidia0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Read(tree(t, tt.files), tab, Options{}).GPUNodes
			require.Equal(t, tt.present, n.Present)
			require.Equal(t, tt.driver != "", n.HasDriver)
			require.Equal(t, tt.driver, n.Driver.Name)
			var missing []string
			for _, m := range n.Missing {
				missing = append(missing, m.String())
			}
			require.Equal(t, tt.missing, missing)
		})
	}
}

// BenchmarkReadGPUNodes measures the device-node check the entrypoint's
// fast path adds: a stat call per name of the table's GPU drivers and the
// lookup of the SoC's driver.
func BenchmarkReadGPUNodes(b *testing.B) {
	root := Root(b.TempDir())
	tab := computecap.DefaultTable()
	orin, ok := tab.SoCByID(35)
	if !ok {
		b.Fatal("no SoC 35")
	}
	f := &Facts{SoC: orin, HasSoC: true, L4T: computecap.L4TVersion{Major: 36, Minor: 4, Patch: 3}, HasL4T: true}
	b.ReportAllocs()
	for b.Loop() {
		if n := ReadGPUNodes(root, tab, f); len(n.Missing) != 2 {
			b.Fatalf("missing %v", n.Missing)
		}
	}
}
