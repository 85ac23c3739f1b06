package detect

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// TestProbeTimeout checks that a probe that hangs is stopped when the
// context ends, and says which deadline fired: the caller's, about 200 ms
// (what is left of it when runTool starts its clock, which under load can
// be 10 ms less), not the probe's own 5 s.
func TestProbeTimeout(t *testing.T) {
	probe := eptest.Script(t, "exec sleep 30")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, _, err := runProbe(ctx, probe, "/usr/lib/libcuda.so.1", nil)
	require.Error(t, err)
	require.Regexp(t, `^no answer within (1[5-9]0|200)ms$`, err.Error())
}

// The time a helper had reads as set, not to the nanosecond it was
// measured at.
func TestRoughly(t *testing.T) {
	for d, want := range map[time.Duration]string{
		toolTimeout + 3*time.Microsecond: "5s", 100*time.Millisecond - 4*time.Millisecond: "96ms",
		99*time.Millisecond + 995*time.Microsecond: "100ms", 1254 * time.Millisecond: "1.25s",
	} {
		require.Equal(t, want, Roughly(d).String(), "%s", d)
	}
}
