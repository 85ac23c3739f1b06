package computecap

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func l4t(s string) L4TVersion {
	v, err := ParseL4TVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// hostOn is a host of the given SoC id on an L4T release, with the
// driver's CUDA version when driver is not "".
func hostOn(t *testing.T, socID int, release, driver string) HostState {
	t.Helper()
	soc, ok := SoCByID(socID)
	require.True(t, ok)
	h := HostState{SoC: soc, HasSoC: true, L4T: l4t(release), HasL4T: true}
	if driver != "" {
		v, err := ParseCUDAVersion(driver)
		require.NoError(t, err)
		h.Driver, h.HasDriver = v, true
	}
	return h
}

func TestCheckHostReleaseLines(t *testing.T) {
	const orin, thor = 35, 38
	img := func(release, cudaVersion string, compat ...string) ImageNeeds {
		c, err := ParseCUDAVersion(cudaVersion)
		require.NoError(t, err)
		return ImageNeeds{L4T: l4t(release), CUDA: c, CompatDirs: compat}
	}
	jp512, jp60, jp62 := img("35.4.1", "11.4"), img("36.3.0", "12.2"), img("36.4.3", "12.6")
	jp70, jp72 := img("38.2.0", "13.0"), img("39.2.0", "13.2", "/usr/local/cuda/compat_orin")
	tests := []struct {
		name      string
		img       ImageNeeds
		host      HostState
		ok        bool
		rule      HostRule
		reason    string
		upgrade   string
		compatDir string
	}{
		{name: "R35 image on R35.2.1", img: jp512, host: hostOn(t, orin, "35.2.1", ""), ok: true, rule: RuleL4T},
		{name: "R36.4 image on R36.3", img: jp62, host: hostOn(t, orin, "36.3.0", "12.2"), rule: RuleL4T,
			reason:  "the host has L4T R36.3.0 (JetPack 6.0) but the image needs L4T R36.4 or a later R36 release",
			upgrade: "JetPack 6.1 (L4T 36.4.0)"},
		{name: "R36.4 image on R36.4.0", img: jp62, host: hostOn(t, orin, "36.4.0", ""), ok: true, rule: RuleL4T},
		{name: "R36.4 image on R36.4.7", img: jp62, host: hostOn(t, orin, "36.4.7", "12.6"), ok: true, rule: RuleL4T},
		{name: "R36.3 image on R36.4.3", img: jp60, host: hostOn(t, orin, "36.4.3", ""), ok: true, rule: RuleL4T},
		{name: "R36 image on R35", img: jp62, host: hostOn(t, orin, "35.4.1", ""), rule: RuleL4T,
			reason:  "the host has L4T R35.4.1 (JetPack 5.1.2) but the image needs L4T R36.4 or a later R36 release",
			upgrade: "JetPack 6.1 (L4T 36.4.0)"},
		{name: "R36 image on Thor R38.2", img: jp62, host: hostOn(t, thor, "38.2.0", ""), rule: RuleL4T,
			reason: "the host has L4T R38.2.0 (JetPack 7.0) but the image needs L4T R36.4 or a later R36 release"},
		{name: "CUDA 13.0 image on Thor R38.4", img: jp70, host: hostOn(t, thor, "38.4.0", ""), ok: true, rule: RuleDriverCUDA},
		{name: "CUDA 13.0 image on Thor R39.2", img: jp70, host: hostOn(t, thor, "39.2.0", "13.2"), ok: true, rule: RuleDriverCUDA},
		{name: "CUDA 13.2 image on Thor R38.2, driver from the table", img: jp72, host: hostOn(t, thor, "38.2.0", ""),
			rule:    RuleDriverCUDA,
			reason:  "the host has a driver for CUDA 13.0 on L4T R38.2.0 (JetPack 7.0) but the image needs a driver for CUDA 13.2 or a later 13.x",
			upgrade: "JetPack 7.2 (L4T 39.2.0)"},
		{name: "CUDA 13.2 image on Thor R38.4 whose driver says 13.2", img: jp72, host: hostOn(t, thor, "38.4.0", "13.2"),
			ok: true, rule: RuleDriverCUDA},
		{name: "CUDA 13.2 image on Thor R39.2.1", img: jp72, host: hostOn(t, thor, "39.2.1", "13.2"), ok: true, rule: RuleDriverCUDA},
		{name: "CUDA 13.2 image on Orin R39.2", img: jp72, host: hostOn(t, orin, "39.2.0", "13.2"), ok: true, rule: RuleDriverCUDA},
		{name: "Orin with an older 13.x driver uses compat_orin", img: jp72, host: hostOn(t, orin, "39.2.0", "13.1"),
			ok: true, rule: RuleDriverCUDA, compatDir: "/usr/local/cuda/compat_orin"},
		{name: "compat_orin does not help a Thor", img: jp72, host: hostOn(t, thor, "38.2.0", "13.0"), rule: RuleDriverCUDA,
			reason:  "the host has a driver for CUDA 13.0 on L4T R38.2.0 (JetPack 7.0) but the image needs a driver for CUDA 13.2 or a later 13.x",
			upgrade: "JetPack 7.2 (L4T 39.2.0)"},
		{name: "CUDA 13 image on Orin R36.4", img: jp72, host: hostOn(t, orin, "36.4.3", "12.6"), rule: RuleDriverCUDA,
			reason:  "the host has a driver for CUDA 12.6 on L4T R36.4.3 (JetPack 6.2) but the image needs a driver for CUDA 13.2 or a later 13.x",
			upgrade: "JetPack 7.2 (L4T 39.2.0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := DefaultTable().CheckHost(tt.img, tt.host)
			require.Equal(t, tt.ok, v.OK, v.Reason())
			require.Equal(t, tt.rule, v.Rule)
			require.Equal(t, tt.reason, v.Reason())
			require.Equal(t, tt.upgrade, v.Upgrade)
			require.Equal(t, tt.compatDir, v.CompatDir)
			require.False(t, v.Unknown)
		})
	}
}

func TestCheckHostUnknown(t *testing.T) {
	tab := DefaultTable()
	v := tab.CheckHost(ImageNeeds{CUDA: cuda(12, 4)}, HostState{})
	require.True(t, v.OK)
	require.Empty(t, v.Rule, "a desktop image has no host rule")

	v = tab.CheckHost(ImageNeeds{L4T: l4t("36.4.3"), CUDA: cuda(12, 6)}, HostState{})
	require.True(t, v.OK)
	require.True(t, v.Unknown)

	v = tab.CheckHost(ImageNeeds{L4T: l4t("39.2.0"), CUDA: cuda(13, 2)}, HostState{})
	require.True(t, v.OK)
	require.True(t, v.Unknown)
	require.Equal(t, RuleDriverCUDA, v.Rule)

	v = tab.CheckHost(ImageNeeds{L4T: l4t("39.2.0"), CUDA: cuda(13, 2)}, HostState{L4T: l4t("38.2.0"), HasL4T: true})
	require.False(t, v.OK)
	require.True(t, v.DriverFromTable)
}

func TestDriverCUDAForL4T(t *testing.T) {
	tab := DefaultTable()
	for in, want := range map[string]CUDAVersion{"35.4.1": cuda(11, 4), "36.3.0": cuda(12, 2), "36.4.7": cuda(12, 6),
		"36.4.5": cuda(12, 6), "38.2.0": cuda(13, 0), "38.4.0": cuda(13, 0), "39.2.0": cuda(13, 2), "39.2.1": cuda(13, 2),
		"38.1.0": cuda(13, 0)} {
		got, ok := tab.DriverCUDAForL4T(l4t(in))
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	_, ok := tab.DriverCUDAForL4T(l4t("40.0.0"))
	require.False(t, ok)
}

func TestParseL4TVersion(t *testing.T) {
	for in, want := range map[string]L4TVersion{"36": {36, 0, 0}, "36.4": {36, 4, 0}, " 36.4.7 ": {36, 4, 7}} {
		got, err := ParseL4TVersion(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, in := range []string{"", "0.1", "36.4.7.1", "36..4", "r36", "36.x", "12345"} {
		_, err := ParseL4TVersion(in)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), "L4T version")
	}
	require.Equal(t, "36.4", l4t("36.4.7").MajorMinor())
	require.True(t, l4t("36.3.9").Less(l4t("36.4.0")))
}
