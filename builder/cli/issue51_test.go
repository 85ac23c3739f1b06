package cli

import (
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
