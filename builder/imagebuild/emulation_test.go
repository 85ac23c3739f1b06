package imagebuild

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	digest "github.com/opencontainers/go-digest"
	"github.com/stretchr/testify/require"
)

// workers is a node's worker list, each worker's platforms native first.
func workers(lists ...[]string) []gateway.WorkerInfo {
	out := make([]gateway.WorkerInfo, len(lists))
	for i, ps := range lists {
		out[i].ID = fmt.Sprint(i)
		for _, p := range ps {
			out[i].Platforms = append(out[i].Platforms, platforms.MustParse(p))
		}
	}
	return out
}

func TestNativeArm64(t *testing.T) {
	tests := []struct {
		name    string
		workers []gateway.WorkerInfo
		native  bool
	}{
		// buildkitd on an x86 machine with QEMU's binfmt handlers.
		{"x86 with QEMU", workers([]string{"linux/amd64", "linux/amd64/v2", "linux/386", "linux/arm64", "linux/arm/v7"}), false},
		{"arm64 runner", workers([]string{"linux/arm64", "linux/arm/v7", "linux/arm/v6"}), true},
		{"arm64 with variant", workers([]string{"linux/arm64/v8"}), true},
		{"32-bit arm is not arm64", workers([]string{"linux/arm/v7", "linux/arm64"}), false},
		{"a second worker native arm64", workers([]string{"linux/amd64", "linux/arm64"}, []string{"linux/arm64"}), true},
		{"no worker", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.native, nativeArm64(tt.workers))
		})
	}
	require.Equal(t, "linux/amd64", nativePlatform(workers([]string{"linux/amd64", "linux/arm64"})))
	require.Equal(t, "", nativePlatform(nil))
}

// The warning comes once per build, naming arm64 runners and ending with
// the caller's advice on adding nodes; the
// report and the timings say per release whether it ran emulated.
func TestNoteEmulation(t *testing.T) {
	jobs := []*releaseJob{{release: testPlan().Releases[0], plan: testPlan()}, {release: testPlan().Releases[1], plan: testPlan()}}
	rec := newTimingRecorder()
	var warnings []string
	for _, j := range jobs {
		j.timings = rec
	}
	shareEmulationNotice(jobs, func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }, "with NODES")
	x86 := workers([]string{"linux/amd64", "linux/arm64"})
	jobs[0].noteEmulation("default", x86)
	jobs[1].noteEmulation("default", x86)
	require.Len(t, warnings, 1)
	for _, want := range []string{"BuildKit node default", "linux/amd64", "QEMU", "ubuntu-24.04-arm"} {
		require.Contains(t, warnings[0], want)
	}
	require.True(t, strings.HasSuffix(warnings[0], "your own arm64 or Jetson BuildKit nodes with NODES"), warnings[0])
	rr := jobs[0].initialReport()
	require.NotNil(t, rr.Emulated)
	require.True(t, *rr.Emulated)
	require.Equal(t, "linux/amd64", rr.BuildPlatform)

	// Retried on an arm64 node: not emulated, no second warning.
	jobs[1].noteEmulation("jetson", workers([]string{"linux/arm64"}))
	require.Len(t, warnings, 1)
	rr = jobs[1].initialReport()
	require.False(t, *rr.Emulated)
	require.Equal(t, "linux/arm64", rr.BuildPlatform)

	timings := rec.result()
	require.Equal(t, []ReleaseTiming{
		{Name: "jetpack6.2", BuildPlatform: "linux/amd64", Emulated: true},
		{Name: "jetpack7.2", BuildPlatform: "linux/arm64", Emulated: false},
	}, timings.Releases)

	var fresh releaseJob
	require.Nil(t, fresh.initialReport().Emulated, "unknown until the build starts")
}

// The timings count each release's router steps and how many BuildKit
// found in its cache, from the vertices' Cached flag.
func TestReleaseTimings(t *testing.T) {
	rec := newTimingRecorder()
	now := time.Now()
	vertex := func(name string, cached bool) *client.Vertex {
		done := now.Add(time.Second)
		return &client.Vertex{Digest: digest.FromString(name), Name: name, Started: &now, Completed: &done, Cached: cached}
	}
	rec.observe("jetpack6.2", &client.SolveStatus{Vertexes: []*client.Vertex{
		vertex("[router 1/3] FROM base", true),
		vertex("[router 2/3] COPY . /src", true),
		vertex("[router 3/3] RUN make", true),
		vertex("stage the routers", false),
	}})
	rec.observe("jetpack7.2", &client.SolveStatus{Vertexes: []*client.Vertex{
		vertex("[router 2/3] COPY . /src", true),
		vertex("[router 3/3] RUN make", false),
	}})
	// A step from an imported cache is reported again, uncached, while its
	// layers are fetched: still one step, cached.
	later := now.Add(2 * time.Second)
	loaded := vertex("[router 3/3] RUN make", false)
	loaded.Started, loaded.Completed = &later, &later
	rec.observe("jetpack6.2", &client.SolveStatus{Vertexes: []*client.Vertex{loaded}})
	rec.noteRelease("jetpack7.2", "linux/amd64", true)
	got := rec.result()
	require.Equal(t, []ReleaseTiming{
		{Name: "jetpack6.2", RouterSteps: 2, RouterCached: 2},
		{Name: "jetpack7.2", BuildPlatform: "linux/amd64", Emulated: true, RouterSteps: 2, RouterCached: 1},
	}, got.Releases)
	var b strings.Builder
	require.NoError(t, got.WriteTable(&b))
	require.Regexp(t, `(?m)^release +build platform +emulated +router steps +cached`, b.String())
	require.Regexp(t, `(?m)^jetpack7\.2 +linux/amd64 +yes +2 +1`, b.String())
}
