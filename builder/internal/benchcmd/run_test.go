package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/e2e"
)

// TestBenchCompares runs the bench as `make bench` does, short: the
// shipped matrix, one round of one cold and one warm build on each build
// path (QEMU and cross), on a real buildkitd and registries, jetbake
// against bake's default output, so that the comparison cannot rot unseen.
// Both tools must build and push the same files on each path and every
// ratio must be a number; no time is asserted. bake with
// rewrite-timestamp=true stands in for a broken peer: its buildx fails
// every bake, as bake failed when its entitlements refused the shipped
// Dockerfile, and the bench must name it and fail.
func TestBenchCompares(t *testing.T) {
	if testing.Short() {
		t.Skip("builds on a buildkitd; run without -short")
	}
	root, err := e2e.FindRepoRoot()
	require.NoError(t, err)
	buildx := filepath.Join(root, "bin", "buildx")
	require.FileExists(t, buildx, "run 'make bin/buildx'")
	// The planted failure: bake-rts's bake file is in its own folder.
	planted := filepath.Join(t.TempDir(), "buildx")
	require.NoError(t, os.WriteFile(planted, []byte(`#!/bin/sh
for a in "$@"; do
  case "$a" in */`+toolBakeRTS+`/docker-bake.json)
    echo "ERROR: planted failure of this test" >&2; exit 1;;
  esac
done
exec '`+buildx+`' "$@"
`), 0o755))

	cfg := config{buildx: planted, cold: 1, warm: 1, timings: true, tools: tools, paths: buildPaths,
		sizes: []size{{name: shippedSize}}, registries: map[string]*string{}}
	var out strings.Builder
	err = run(t.Context(), cfg, &out)
	text := out.String()
	t.Log(text)

	require.Error(t, err, "a peer that failed every round breaks the comparison")
	for _, path := range []string{"QEMU", "cross"} {
		require.ErrorContains(t, err, "shipped matrix, "+path+" path: bake (rewrite-timestamp) failed every round: round 1, cold: ERROR: planted failure of this test")
		require.Regexp(t, path+` path: same work as bake: the [0-9]+ releases' images have the same [0-9]+ files`, text)
	}
	require.NotContains(t, err.Error(), "bake (default)", "bake's default output compared")
	require.NotContains(t, err.Error(), "digests", "jetbake's digests compared with nothing: one round")
	for _, path := range buildPaths {
		require.Regexp(t, `round 1 `+path+`\s+bake-rts\s+cold FAILED \(ERROR: planted failure of this test`, text)
		require.Regexp(t, `round 1 `+path+`\s+(jetbake|bake)\s+cold\s+[0-9.]+s\s+warm [0-9.]+s\s+\(peak RSS [0-9]+ MiB\)`, text)
	}
	require.Contains(t, text, "jetbake/bake-rts: no ratio, no round where both built")

	require.Regexp(t, `CPUs, load average [0-9.]+ [0-9.]+ [0-9.]+;`, text, "what else ran on the machine")
	number := `[0-9]+\.[0-9]+x`
	require.Regexp(t, `jetbake/bake round by round: cold `+number+` \(median `+number+`\), cold without router builds `+number+
		` \(median `+number+`\), warm `+number+` \(median `+number+`\)`, text)
	require.Regexp(t, `router builds\s+[0-9.]+\s+[0-9.]+\s+-`, text, "both tools' phases, none of the failed peer's")
	require.Regexp(t, `export\s+[0-9.]+\s+[0-9.]+`, text)
	require.Regexp(t, `cold <= 1.0x: (NOT )?met \(`+number+`\); cold without router builds <= 0.5x: (NOT )?met \(`+number+
		`\); warm <= 0.3x: (NOT )?met \(`+number+`\)`, text)
	require.Regexp(t, `same digests every build\s+yes`, text, "jetbake's images are reproducible")

	// The paths side by side, for both tools; the failed peer has none.
	require.Regexp(t, `router builds, QEMU\s+[0-9.]+ \([0-9.-]+\)\s+[0-9.]+ \([0-9.-]+\)\s+-`, text)
	require.Regexp(t, `router builds, cross\s+[0-9.]+ \([0-9.-]+\)\s+[0-9.]+ \([0-9.-]+\)\s+-`, text)
	require.Regexp(t, `cold cross/QEMU \(median\)\s+`+number+`\s+`+number+`\s+-`, text)
	require.Regexp(t, `jetbake (NOT )?met \(`+number+`\); bake \(default\) (NOT )?met \(`+number+`\)`, text, "the cross goal, stated")
	require.Regexp(t, `\| shipped matrix\s+\| jetbake\s+\| [0-9.]+\s+\| [0-9.]+\s+\| [0-9.]+\s+\| [0-9.]+\s+\| `+number+` \|`, text)
}
