package computecap

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Each Jetson's GPU driver and the device nodes CUDA needs of it, by L4T
// line: nvgpu on Xavier and Orin (JetPack 5, 6 and Orin on 7.2), OpenRM on
// Thor (JetPack 7); without the L4T release, the one every release of the
// SoC agrees on.
func TestGPUDriverOf(t *testing.T) {
	tab := DefaultTable()
	nvgpu := GPUDriver{Name: "nvgpu", Nodes: []DeviceNode{{"/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"}, {"/dev/nvmap"}}}
	openRM := GPUDriver{Name: "OpenRM", Nodes: []DeviceNode{{"/dev/nvidiactl"}, {"/dev/nvidia0"}}}
	soc := func(family string) SoC {
		for _, s := range tab.SoCs {
			if s.Family == family {
				return s
			}
		}
		t.Fatalf("no SoC of family %s", family)
		return SoC{}
	}
	tests := []struct {
		family string
		major  int
		want   GPUDriver
		ok     bool
	}{
		{"Xavier", 35, nvgpu, true},
		{"Orin", 35, nvgpu, true},
		{"Orin", 36, nvgpu, true},
		{"Orin", 39, nvgpu, true},
		{"Thor", 38, openRM, true},
		{"Thor", 39, openRM, true},
		{"Orin", 0, nvgpu, true},
		{"Thor", 0, openRM, true},
		{"Thor", 36, openRM, true}, // no R36 release runs Thor: the SoC's own
		{"Nano/TX1", 0, GPUDriver{}, false},
	}
	for _, tt := range tests {
		got, ok := tab.GPUDriverOf(soc(tt.family), tt.major)
		require.Equal(t, tt.ok, ok, "%s on R%d", tt.family, tt.major)
		require.Equal(t, tt.want, got, "%s on R%d", tt.family, tt.major)
	}
	require.Equal(t, []string{"/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl", "/dev/nvmap", "/dev/nvidiactl", "/dev/nvidia0"},
		tab.GPUDeviceNodes())
	require.Equal(t, "/dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl)", nvgpu.Nodes[0].String())
	require.Equal(t, "/dev/nvmap", nvgpu.Nodes[1].String())

	// Two releases of a line that disagree give no driver: no check.
	odd := tab.Clone()
	for i := range odd.JetPacks {
		if odd.JetPacks[i].JetPack == "7.1" {
			odd.JetPacks[i].DriverDirs[0].Driver.Name = "other"
		}
	}
	_, ok := odd.GPUDriverOf(soc("Thor"), 38)
	require.False(t, ok)
	got, _ := tab.GPUDriverOf(soc("Thor"), 38)
	require.Equal(t, openRM, got, "the copy's change leaves the table alone")
}
