package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchRuns runs the whole bench, small: jetbake on a synthetic matrix
// of two releases, one cold and one warm build, on a real buildkitd and
// registry. It checks that the parts run and report, never how fast.
func TestBenchRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds on a buildkitd; run without -short")
	}
	cfg := config{cold: 1, warm: 1, timings: true, tools: []string{toolJetbake},
		sizes: []size{{name: "2", releases: 2}}, registries: map[string]*string{}}
	var out strings.Builder
	require.NoError(t, run(t.Context(), cfg, &out))
	text := out.String()
	t.Log(text)
	require.Contains(t, text, "2 releases, 4 router builds")
	require.Regexp(t, `round 1 jetbake\s+cold\s+[0-9.]+s\s+warm [0-9.]+s\s+\(peak RSS [0-9]+ MiB\)`, text)
	require.Contains(t, text, "jetbake's phases, cold build:")
	require.Contains(t, text, "router builds")
	require.Contains(t, text, "tagging")
	require.Regexp(t, `same digests every build\s+yes`, text)
	require.Contains(t, text, "bake's default mode was not built")
}
