package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Dockerfile without the router stage is refused by validate and plan
// with or without runtime_target, naming the stage probably meant and its
// line (issue 51 item 1: validate said ok for `FROM ubuntu AS routr`).
func TestValidateRouterStageTypo(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	r := run(t, "init")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM ubuntu AS routr\nRUN true\n"), 0o644))
	want := `router.target: "router": is not a stage of ` + filepath.Join(dir, "Dockerfile") + `; fix: ` +
		filepath.Join(dir, "Dockerfile") + `:1 names the stage "routr": did you mean "router"? rename it (FROM ubuntu AS router) or set router.target to "routr"`
	for _, args := range [][]string{{"validate"}, {"plan"}} {
		r := run(t, args...)
		require.Equal(t, ExitFailure, r.code, "%s: %s", args[0], r.stderr)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		require.Contains(t, r.stderr, "matrix.json:")
		require.Contains(t, r.stderr, want)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM ubuntu AS router\nRUN true\n"), 0o644))
	r = run(t, "validate")
	require.Equal(t, ExitOK, r.code, r.stderr)
}

// pick on a machine that is not a Jetson says so, with the fix, before it
// asks a registry anything (issue 51 item 6): 127.0.0.1:1 would answer
// "nothing answers" if it were asked.
func TestPickNotAJetson(t *testing.T) {
	empty := t.TempDir()
	want := "the host under " + empty + " is not a Jetson: neither its device tree nor /sys/devices/soc0 names a Jetson SoC, " +
		"so no image of 127.0.0.1:1/acme/router runs on it; fix: run jetbake pick on the Jetson itself, or pass --sysroot DIR with the board's root file system\n"
	r := run(t, "pick", "--sysroot", empty, "127.0.0.1:1/acme/router")
	require.Equal(t, ExitFailure, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, want, r.stderr)

	r = run(t, "pick", "--sysroot", empty, "--format", "json", "127.0.0.1:1/acme/router")
	require.Equal(t, ExitFailure, r.code, r.stderr)
	var doc struct {
		Sentence   string            `json:"sentence"`
		Candidates []json.RawMessage `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	require.Equal(t, strings.TrimSuffix(want, "\n"), doc.Sentence)
	require.Empty(t, doc.Candidates)
}
