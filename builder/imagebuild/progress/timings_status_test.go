package progress

import (
	"testing"
	"time"

	"github.com/moby/buildkit/client"
	digest "github.com/opencontainers/go-digest"
	"github.com/stretchr/testify/require"
)

// Another tool's status updates are timed by jetbake's arithmetic, from
// the start and end given, with its own names for the phases.
func TestStatusTimings(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ts := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	updates := []*client.SolveStatus{
		{Vertexes: []*client.Vertex{{Digest: digest.FromString("run"), Name: "[t router 2/3] RUN x", Started: ts(1)}}},
		{Vertexes: []*client.Vertex{{Digest: digest.FromString("run"), Name: "[t router 2/3] RUN x", Started: ts(1), Completed: ts(5)}}},
		{Vertexes: []*client.Vertex{{Digest: digest.FromString("export"), Name: "[t] exporting to image", Started: ts(5), Completed: ts(8)}},
			Statuses: []*client.VertexStatus{{ID: "pushing layers", Vertex: digest.FromString("export"), Started: ts(6), Completed: ts(7)}}},
	}
	classify := func(name string) Phase {
		if name == "[t] exporting to image" {
			return PhaseExport
		}
		return PhaseRouter
	}
	got := StatusTimings(t0, t0.Add(10*time.Second), updates, classify)
	require.InDelta(t, 10, got.TotalSeconds, 1e-9)
	require.InDelta(t, 3, got.OutsideSeconds, 1e-9, "0-1 s and 8-10 s")
	for p, wall := range map[Phase]float64{PhaseRouter: 4, PhaseExport: 2, PhasePush: 1} {
		pt, ok := got.Phase(p)
		require.True(t, ok, p)
		require.InDelta(t, wall, pt.WallSeconds, 1e-9, p)
	}
	_, ok := got.Phase(PhaseAssembly)
	require.False(t, ok)
	require.Empty(t, got.Releases, "no release is known")

	// Without classify, jetbake's rules.
	got = StatusTimings(t0, t0.Add(10*time.Second), updates, nil)
	pt, ok := got.Phase(PhaseAssembly)
	require.True(t, ok, "buildx's \"[t] exporting to image\" is not jetbake's \"exporting to image\"")
	require.Equal(t, 1, pt.Steps)
	require.Equal(t, []Phase{PhaseResolve, PhaseFrontend, PhasePull, PhaseRouter, PhaseAssembly, PhaseSmoke, PhaseExport, PhasePush, PhaseTag}, Phases())
}
