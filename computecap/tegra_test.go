package computecap

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSoCByCompatible(t *testing.T) {
	tests := []struct {
		entry  string
		family string
		name   string
		cap    Capability
	}{
		{"nvidia,tegra234", "Orin", "tegra234", mk(8, 7)},
		{"tegra234", "Orin", "tegra234", mk(8, 7)},
		{"nvidia,tegra264", "Thor", "tegra264", mk(11, 0)},
		{"nvidia,tegra194", "Xavier", "tegra194", mk(7, 2)},
		{"nvidia,tegra186", "TX2", "tegra186", mk(6, 2)},
		{"nvidia,tegra210", "Nano/TX1", "tegra210", mk(5, 3)},
		{" nvidia,tegra234\x00", "Orin", "tegra234", mk(8, 7)},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			s, ok := SoCByCompatible(tt.entry)
			require.True(t, ok)
			require.Equal(t, tt.family, s.Family)
			require.Equal(t, tt.name, s.Name)
			require.Equal(t, tt.cap, s.Capability)
		})
	}
	for _, entry := range []string{"", "nvidia,", "nvidia,tegra241", "nvidia,p3767-0005", "nvidia,tegra23",
		"NVIDIA,TEGRA234", "qcom,tegra234", "nvidia,tegra234x", "nvidia,nvidia,tegra234"} {
		_, ok := SoCByCompatible(entry)
		require.False(t, ok, entry)
	}
}

// SoCFromCompatible takes the first entry that names a SoC: compatible
// lists go from the most specific to the most general, so the first SoC
// is the chip itself and a later one a chip it can pass for. The last
// case is where searching from the end would answer Orin for a Thor.
func TestSoCFromCompatible(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		want    string
	}{
		{"Orin Nano Super", []string{"nvidia,p3768-0000+p3767-0005-super", "nvidia,p3767-0005", "nvidia,tegra234"}, "tegra234"},
		{"AGX Thor", []string{"nvidia,p4071-0000+p3834-0008", "nvidia,p3834-0008", "nvidia,tegra264"}, "tegra264"},
		{"AGX Xavier", []string{"nvidia,p2972-0000", "nvidia,tegra194"}, "tegra194"},
		{"bare SoC name", []string{"tegra210"}, "tegra210"},
		{"Raspberry Pi", []string{"raspberrypi,5-model-b", "brcm,bcm2712"}, ""},
		{"none", nil, ""},
		{"an unknown SoC before a known one", []string{"nvidia,p9999", "nvidia,tegra300", "nvidia,tegra264"}, "tegra264"},
		{"a SoC listing an older one it passes for", []string{"nvidia,p3834-0008", "nvidia,tegra264", "nvidia,tegra234"}, "tegra264"},
	}
	tab := DefaultTable()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			soc, ok := tab.SoCFromCompatible(tt.entries)
			require.Equal(t, tt.want != "", ok)
			require.Equal(t, tt.want, soc.Name)
		})
	}
}

func TestSoCByID(t *testing.T) {
	for id, family := range map[int]string{33: "Nano/TX1", 24: "TX2", 25: "Xavier", 35: "Orin", 38: "Thor"} {
		s, ok := SoCByID(id)
		require.True(t, ok, id)
		require.Equal(t, family, s.Family)
		require.Equal(t, id, s.SocID)
	}
	for _, id := range []int{0, -1, 36, 34, 37, 39, 64} {
		_, ok := SoCByID(id)
		require.False(t, ok, id)
	}
}

func TestSoCTable(t *testing.T) {
	all := SoCs()
	require.Len(t, all, 5)
	for _, s := range all {
		require.True(t, s.Capability.IsTegra())
		require.Equal(t, s.Capability, s.Capability.Canonical())
		byCap, ok := SoCByCapability(s.Capability)
		require.True(t, ok)
		require.Equal(t, s, byCap)
		_, err := Parse(s.Capability.String())
		require.NoError(t, err)
	}
	all[0].Name = "changed"
	require.Equal(t, "tegra210", SoCs()[0].Name)

	thor, ok := SoCByCapability(mk(10, 1))
	require.True(t, ok)
	require.Equal(t, "tegra264", thor.Name)
	_, ok = SoCByCapability(mk(8, 6))
	require.False(t, ok)
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		c    Capability
		want string
	}{
		{mk(8, 7), "Jetson Orin, SM 8.7"},
		{mk(11, 0), "Jetson Thor, SM 11.0"},
		{mk(10, 1), "Jetson Thor, SM 10.1"},
		{mk(7, 2), "Jetson Xavier, SM 7.2"},
		{mk(6, 2), "Jetson TX2, SM 6.2"},
		{mk(5, 3), "Jetson Nano/TX1, SM 5.3"},
		{mk(8, 6), "GPU with SM 8.6"},
		{mk(10, 0), "GPU with SM 10.0"},
		{mkA(9, 0), "GPU with SM 9.0a"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Describe(tt.c))
	}
}
