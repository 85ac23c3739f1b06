package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/moby/buildkit/client"
	digest "github.com/opencontainers/go-digest"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		want Phase
	}{
		{"resolve build base 127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0", PhaseResolve},
		{"[internal] load metadata for 127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@sha256:ab", PhaseResolve},
		{"[internal] load build definition from Dockerfile", PhaseFrontend},
		{"[internal] load .dockerignore", PhaseFrontend},
		{"[internal] load build context", PhaseFrontend},
		{"[router 1/3] FROM 127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@sha256:ab", PhasePull},
		{RuntimeBasePrefix + "127.0.0.1:5000/nvidia/l4t-cuda:12.6.11-runtime@sha256:cd", PhasePull},
		{"docker-image://127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@sha256:ab", PhasePull},
		{"local://jetbake-entrypoint", PhaseFrontend},
		{"jetbake context: jetson-compute-cap.sh", PhaseFrontend},
		{"[router 2/3] COPY router.sh.in /src/router.sh.in", PhaseRouter},
		{"[1/3] FROM 127.0.0.1:5000/nvidia/l4t-jetpack:r35.4.1@sha256:ab", PhasePull},
		{"[3/3] RUN mkdir -p /out", PhaseRouter},
		{"[router 3/3] RUN if [ -n \"\" ]; then exit 1; fi", PhaseRouter},
		{"write /etc/jetbake/image.json", PhaseAssembly},
		{"add /usr/local/bin/router-87 (sm_87)", PhaseAssembly},
		{"exporting to image", PhaseExport},
		{"smoke: text-embeddings-router --version on the runtime image", PhaseSmoke},
		{"smoke: the build base's CUDA driver stub, as libcuda.so.1 for the smoke run only", PhaseSmoke},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ClassifyVertex(tt.name), tt.name)
	}
}

func TestUnionAndSubtract(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s, e int) span {
		return span{start: t0.Add(time.Duration(s) * time.Second), end: t0.Add(time.Duration(e) * time.Second)}
	}
	require.Equal(t, 5*time.Second, union([]span{at(0, 2), at(1, 3), at(4, 6)}))
	require.Equal(t, 4*time.Second, union([]span{at(0, 4), at(1, 2)}), "a span inside another")
	require.Equal(t, time.Duration(0), union(nil))
	parts := subtract([]span{at(0, 10)}, []span{at(2, 3), at(5, 12)})
	require.Equal(t, []span{at(0, 2), at(3, 5)}, parts)
	require.Equal(t, []span{at(0, 1)}, subtract([]span{at(0, 1)}, []span{at(1, 2)}), "touching is not overlapping")
}

func TestTimingRecorder(t *testing.T) {
	r := NewRecorder()
	r.start = r.start.Add(-2 * time.Second) // every step below is in the past
	t0 := r.start
	ts := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	run := digest.FromString("run")
	export := digest.FromString("export")
	// Two releases run the same vertex; the later update of a vertex replaces the earlier.
	r.observe("a", &client.SolveStatus{Vertexes: []*client.Vertex{{Digest: run, Name: "[router 2/2] RUN x", Started: ts(0)}}})
	r.observe("a", &client.SolveStatus{Vertexes: []*client.Vertex{{Digest: run, Name: "[router 2/2] RUN x", Started: ts(0), Completed: ts(100)}}})
	r.observe("b", &client.SolveStatus{Vertexes: []*client.Vertex{{Digest: run, Name: "[router 2/2] RUN x", Started: ts(50), Completed: ts(150), Cached: true}}})
	r.observe("a", &client.SolveStatus{
		Vertexes: []*client.Vertex{{Digest: export, Name: "exporting to image", Started: ts(200), Completed: ts(400)}},
		Statuses: []*client.VertexStatus{
			{ID: "exporting layers", Vertex: export, Started: ts(200), Completed: ts(250)},
			{ID: "pushing layers", Vertex: export, Started: ts(250), Completed: ts(350)},
		},
	})
	r.own = append(r.own, span{phase: PhaseTag, start: *ts(400), end: *ts(420)})
	got := r.Result()
	byName := map[Phase]PhaseTiming{}
	for _, p := range got.Phases {
		byName[p.Name] = p
	}
	require.Equal(t, PhaseTiming{Name: PhaseRouter, WallSeconds: 0.15, BusySeconds: 0.2, Steps: 2, Cached: 1}, byName[PhaseRouter])
	require.Equal(t, PhaseTiming{Name: PhaseExport, WallSeconds: 0.1, BusySeconds: 0.1, Steps: 1}, byName[PhaseExport], "export less its push")
	require.Equal(t, PhaseTiming{Name: PhasePush, WallSeconds: 0.1, BusySeconds: 0.1, Steps: 1}, byName[PhasePush])
	require.Equal(t, 0.02, byName[PhaseTag].WallSeconds)
	require.Equal(t, []Phase{PhaseRouter, PhaseExport, PhasePush, PhaseTag}, []Phase{got.Phases[0].Name, got.Phases[1].Name, got.Phases[2].Name, got.Phases[3].Name})
	require.InDelta(t, got.TotalSeconds-0.37, got.OutsideSeconds, 0.0021, "outside = total less the steps' union (150+50+170 ms)")

	var out strings.Builder
	require.NoError(t, got.WriteTable(&out))
	require.Contains(t, out.String(), "router builds")
	require.Contains(t, out.String(), "outside any step")
}

// A vertex shared by two builds of one release reaches both status
// streams; one may report it running after the other reported it done.
// The step keeps its end rather than running until the build ends.
func TestTimingRecorderSharedVertex(t *testing.T) {
	r := NewRecorder()
	r.start = r.start.Add(-10 * time.Second)
	t0 := r.start
	ts := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	ctx := digest.FromString("context")
	r.observe("a", &client.SolveStatus{Vertexes: []*client.Vertex{{Digest: ctx, Name: "[internal] load build context", Started: ts(100), Completed: ts(160)}}})
	r.observe("a", &client.SolveStatus{Vertexes: []*client.Vertex{{Digest: ctx, Name: "[internal] load build context", Started: ts(100)}}})
	got := r.Result()
	require.Len(t, got.Phases, 1)
	require.Equal(t, PhaseFrontend, got.Phases[0].Name)
	require.InDelta(t, 0.06, got.Phases[0].WallSeconds, 0.001)
}

// A remembered verdict shows as a smoke-run step that was cached.
func TestRecordCached(t *testing.T) {
	r := NewRecorder()
	r.RecordCached(PhaseSmoke, time.Now())
	r.Record(PhaseResolve, time.Now())
	smoke, ok := r.Result().Phase(PhaseSmoke)
	require.True(t, ok)
	require.Equal(t, 1, smoke.Steps)
	require.Equal(t, 1, smoke.Cached)
	resolve, _ := r.Result().Phase(PhaseResolve)
	require.Zero(t, resolve.Cached)
	var nilRecorder *Recorder
	nilRecorder.RecordCached(PhaseSmoke, time.Now()) // no recorder, no panic
}
