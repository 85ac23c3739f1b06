package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/buildkit/client"
	digest "github.com/opencontainers/go-digest"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// Every local path a target reads outside the bake file's folder is
// granted, as `buildx bake` v0.38's filesystem entitlements require: the
// shipped Dockerfile-jetson, outside the router's context, was not, and
// every bake build of the bench failed.
func TestBakeGrants(t *testing.T) {
	p := demoPlan(t)
	bf, _, err := newBakeFile(p, testInputs())
	require.NoError(t, err)
	grants := bakeGrants(p, testInputs().EntrypointDir)
	require.Contains(t, grants, p.Router.Dockerfile, "the shipped Dockerfile is outside the TEI source")
	granted := func(path string) bool {
		for _, g := range grants {
			if path == g || strings.HasPrefix(path, g+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	read := 0
	for name, target := range bf.Target {
		paths := []string{target.Context}
		if target.Dockerfile != "" {
			df := target.Dockerfile
			if !filepath.IsAbs(df) {
				df = filepath.Join(target.Context, df)
			}
			paths = append(paths, df)
		}
		for _, c := range target.Contexts {
			if !strings.HasPrefix(c, "target:") {
				paths = append(paths, c)
			}
		}
		for _, path := range paths {
			if filepath.IsAbs(path) {
				read++
				require.True(t, granted(path), "target %s reads %s outside the bake file's folder without a grant", name, path)
			}
		}
	}
	require.NotZero(t, read)
}

// bakeStatus is one rawjson line of a vertex of bake's build.
func bakeStatus(t *testing.T, name string, start, end time.Time) []byte {
	t.Helper()
	st := client.SolveStatus{Vertexes: []*client.Vertex{{Digest: digest.FromString(name), Name: name, Started: &start, Completed: &end}}}
	data, err := json.Marshal(st)
	require.NoError(t, err)
	return data
}

func TestBakePhases(t *testing.T) {
	t0 := time.Now().Add(-time.Minute)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var out []byte
	for _, v := range []struct {
		name       string
		start, end float64
	}{
		{"[jetpack6_2-sm87 internal] load metadata for 127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0", 0, 1},
		{"[jetpack6_2 internal] load build definition from Dockerfile", 0, 0.5},
		{"[jetpack6_2-sm87 toolchain 1/4] FROM 127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@sha256:ab", 1, 2},
		{"[jetpack6_2-sm87 router 3/5] RUN cargo build", 2, 12},
		{"[jetpack6_2-runtime runtime-base 2/2] RUN true", 2, 3},
		{"[jetpack6_2 router 4/5] COPY --from=jetbake jetson-compute-cap.sh /usr/local/bin/", 2, 2.5},
		{"[jetpack6_2 context jetbake] load from client", 0, 0.25},
		{"[jetpack6_2 assembly 2/5] COPY --from=router-87 /usr/local/bin/text-embeddings-router /usr/local/bin/router-87", 12, 13},
		{"[jetpack6_2] exporting to image", 13, 15},
		{"[jetpack6_2] resolving provenance for metadata file", 15, 15.5},
	} {
		out = append(out, bakeStatus(t, v.name, at(v.start), at(v.end))...)
		out = append(out, '\n')
	}
	out = append(out, "#1 a line of text\n"...)
	updates, text := splitRawJSON(out)
	require.Len(t, updates, 10)
	require.Equal(t, []string{"#1 a line of text"}, text)
	targets := map[string]bool{"jetpack6_2": true, "jetpack6_2-sm87": true, "jetpack6_2-runtime": true}
	tm := bakePhases(t0, at(16), updates, targets)
	want := map[progress.Phase]float64{
		progress.PhaseResolve: 1, progress.PhaseFrontend: 0.5, progress.PhasePull: 1,
		progress.PhaseRouter: 10, progress.PhaseAssembly: 1, progress.PhaseExport: 2.5,
	}
	require.Len(t, tm.Phases, len(want))
	for p, wall := range want {
		got, ok := tm.Phase(p)
		require.True(t, ok, p)
		require.InDelta(t, wall, got.WallSeconds, 0.001, p)
	}
	require.InDelta(t, 16, tm.TotalSeconds, 0.001)
	require.InDelta(t, 0.5, tm.OutsideSeconds, 0.001, "15.5 s to 16 s")
	router, _ := tm.Phase(progress.PhaseRouter)
	require.Equal(t, 3, router.Steps, "a linked target's step, reported under the runtime target's name, is a router step")
}

func TestCutTargetPrefix(t *testing.T) {
	targets := map[string]bool{"jetpack6_2": true, "jetpack6_2-sm87": false}
	tests := []struct{ name, target, rest string }{
		{"[jetpack6_2-sm87 router 3/5] RUN x", "jetpack6_2-sm87", "[router 3/5] RUN x"},
		{"[jetpack6_2 2/5] COPY image.json /etc/jetbake/image.json", "jetpack6_2", "[2/5] COPY image.json /etc/jetbake/image.json"},
		{"[jetpack6_2 internal] load build context", "jetpack6_2", "[internal] load build context"},
		{"[jetpack6_2] exporting to image", "jetpack6_2", "exporting to image"},
		{"[internal] load build definition from Dockerfile", "", "[internal] load build definition from Dockerfile"},
		{"[router 3/5] RUN x", "", "[router 3/5] RUN x"},
		{"exporting to image", "", "exporting to image"},
		{"[", "", "["},
	}
	for _, tt := range tests {
		target, rest := cutTargetPrefix(tt.name, targets)
		require.Equal(t, tt.target, target, tt.name)
		require.Equal(t, tt.rest, rest, tt.name)
	}
}

// A failed bake says why first: buildx's ERROR line, not its command line
// or a line of rawjson.
func TestBakeFailure(t *testing.T) {
	exit := errors.New("exit status 1")
	err := bakeFailure(&toolError{cmd: "buildx bake", err: exit, tail: `{"vertexes":[]}`},
		[]string{"#0 building with \"jetbake-bench\"", "ERROR: additional privileges requested"}, nil)
	require.Equal(t, "ERROR: additional privileges requested (buildx bake: exit status 1)", firstLine(err))
	require.True(t, errors.Is(err, exit))
	require.NotContains(t, err.Error(), "vertexes")

	now := time.Now()
	updates := []*client.SolveStatus{{Vertexes: []*client.Vertex{{Name: "[jetpack6_2-sm87 router 3/5] RUN cargo build", Started: &now, Error: "process did not complete successfully: exit code: 101"}}}}
	err = bakeFailure(errors.New("exit status 1"), nil, updates)
	require.Equal(t, "[jetpack6_2-sm87 router 3/5] RUN cargo build: process did not complete successfully: exit code: 101 (buildx bake: exit status 1)", firstLine(err))
}
