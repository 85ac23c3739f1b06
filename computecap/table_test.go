package computecap_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/cctest"
)

// A future Jetson is rows of the table: every rule follows, and desktop
// GPUs of the same major keep their rules.
func TestFutureJetsonRow(t *testing.T) {
	tab := cctest.FutureTable()
	sm := cctest.FutureSM()
	desktop := computecap.Capability{Major: 12, Minor: 0}

	require.True(t, tab.IsTegra(sm))
	require.False(t, sm.IsTegra(), "the shipped table does not know it")
	require.False(t, tab.IsTegra(desktop), "a Jetson row does not make SM 12.x desktop GPUs Tegra")
	require.Equal(t, "Jetson Future, SM 12.5", tab.Describe(sm))

	soc, ok := tab.SoCByID(cctest.FutureSocID)
	require.True(t, ok)
	require.Equal(t, cctest.FutureSoCName, soc.Name)
	soc, ok = tab.SoCFromCompatible([]string{"nvidia,p9998+" + cctest.FuturePart, "nvidia,tegra300"})
	require.True(t, ok)
	class, known := soc.ModuleClass(nil, cctest.FutureMachine)
	require.True(t, known)
	require.Equal(t, cctest.FutureModule, class)

	got, err := tab.Pick(sm, []computecap.Capability{desktop, sm})
	require.NoError(t, err)
	require.Equal(t, sm, got)
	_, err = tab.Pick(sm, []computecap.Capability{desktop})
	require.ErrorContains(t, err, "no binary for Jetson Future (SM 12.5)")
	runs, _ := tab.RunsOn(desktop, computecap.Capability{Major: 12, Minor: 1})
	require.True(t, runs, "desktop 12.0 code still runs on a 12.1 GPU")

	require.NoError(t, tab.CanCompile(sm, cctest.FutureCUDA()))
	major, ok := tab.L4TMajorForJetPack(cctest.FutureJetPack)
	require.True(t, ok)
	require.Equal(t, 40, major)
	rel := tab.Releases()
	require.Equal(t, []computecap.Capability{sm}, rel[len(rel)-1].Capabilities)

	l4t, err := computecap.ParseL4TVersion(cctest.FutureL4T)
	require.NoError(t, err)
	v := tab.CheckHost(computecap.ImageNeeds{L4T: l4t, CUDA: cctest.FutureCUDA()},
		computecap.HostState{SoC: soc, HasSoC: true, L4T: l4t, HasL4T: true})
	require.True(t, v.OK, v.Reason())
	require.Equal(t, computecap.RuleDriverCUDA, v.Rule)

	// The shipped table is untouched.
	_, ok = computecap.SoCByID(cctest.FutureSocID)
	require.False(t, ok)
}

// DefaultTable hands out copies.
func TestDefaultTableIsACopy(t *testing.T) {
	tab := computecap.DefaultTable()
	tab.SoCs[3].Modules[0].Parts[0] = "changed"
	tab.JetPacks[0].JetPack = "changed"
	fresh := computecap.DefaultTable()
	require.Equal(t, "p3701", fresh.SoCs[3].Modules[0].Parts[0])
	require.NotEqual(t, "changed", fresh.JetPacks[0].JetPack)
	orin, ok := computecap.SoCByID(35)
	require.True(t, ok)
	orin.Modules[0].Class = "changed"
	orin, _ = computecap.SoCByID(35)
	require.Equal(t, "Jetson AGX Orin", orin.Modules[0].Class)
}
