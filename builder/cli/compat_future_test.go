package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/cctest"
)

// A future Jetson is rows of the table: compat's answers follow it, and a
// desktop GPU of the same major keeps the desktop rules.
func TestCompatFutureJetson(t *testing.T) {
	tab := cctest.FutureTable()
	sm := cctest.FutureSM()
	desktop := computecap.Capability{Major: 12, Minor: 0}
	got := judge(tab, sm, []computecap.Capability{desktop, sm})
	require.False(t, got[0].Runs)
	require.Contains(t, got[0].Reason, "does not run on Jetson Future, SM 12.5: Tegra GPUs run only code built for their own SM")
	require.True(t, got[1].Runs)
	pickSM, binary, reason := pick(tab, sm, []computecap.Capability{desktop, sm})
	require.Equal(t, "12.5", pickSM)
	require.Equal(t, "router-125", binary)
	require.Empty(t, reason)

	// The shipped table treats 12.5 as a desktop GPU that runs 12.0 code.
	pickSM, _, _ = pick(computecap.DefaultTable(), sm, []computecap.Capability{desktop})
	require.Equal(t, "12.0", pickSM)
	_, _, reason = pick(tab, sm, []computecap.Capability{desktop})
	require.Equal(t, "no binary for Jetson Future (SM 12.5) in this image: it holds sm_120", reason)
}
