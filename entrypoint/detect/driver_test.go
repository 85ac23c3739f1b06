package detect

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// TestProbeTimeout checks that a probe that hangs is stopped when the
// context ends, and says which deadline fired: the caller's 200 ms, which
// came before the probe's own 5 s. (200 ms, not 100: the time given is
// rounded to 10 ms from 100 ms on, so the microseconds before runTool
// starts its clock do not show, as they did at 100 ms, read as "99ms".)
func TestProbeTimeout(t *testing.T) {
	probe := eptest.Script(t, "exec sleep 30")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := runProbe(ctx, probe, "/usr/lib/libcuda.so.1", nil)
	require.EqualError(t, err, "no answer within 200ms")
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
