package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/moby/buildkit/client"
	digest "github.com/opencontainers/go-digest"
	"github.com/stretchr/testify/require"
)

// The timings count each release's router steps and how many BuildKit
// found in its cache, from the vertices' Cached flag.
func TestReleaseTimings(t *testing.T) {
	rec := NewRecorder()
	now := time.Now()
	vertex := func(name string, cached bool) *client.Vertex {
		done := now.Add(time.Second)
		return &client.Vertex{Digest: digest.FromString(name), Name: name, Started: &now, Completed: &done, Cached: cached}
	}
	rec.observe("jetpack6.2", &client.SolveStatus{Vertexes: []*client.Vertex{
		vertex("[router 1/3] FROM base", true),
		vertex("[router 2/3] COPY . /src", true),
		vertex("[router 3/3] RUN make", true),
		vertex("add the routers (sm_87) and /etc/jetbake/image.json", false),
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
	rec.NoteRelease("jetpack7.2", "linux/amd64", "qemu", true)
	rec.NoteRelease("jetpack6.1", "linux/amd64", "cross", false)
	got := rec.Result()
	require.Equal(t, []ReleaseTiming{
		{Name: "jetpack6.1", BuildPlatform: "linux/amd64", BuildPath: "cross"},
		{Name: "jetpack6.2", RouterSteps: 2, RouterCached: 2},
		{Name: "jetpack7.2", BuildPlatform: "linux/amd64", BuildPath: "qemu", Emulated: true, RouterSteps: 2, RouterCached: 1},
	}, got.Releases)
	var b strings.Builder
	require.NoError(t, got.WriteTable(&b))
	require.Regexp(t, `(?m)^release +build platform +build path +emulated +router steps +cached`, b.String())
	require.Regexp(t, `(?m)^jetpack7\.2 +linux/amd64 +qemu +yes +2 +1`, b.String())
	require.Regexp(t, `(?m)^jetpack6\.1 +linux/amd64 +cross +no +0 +0`, b.String())
}
