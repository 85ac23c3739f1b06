package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Shells complete release names from the matrix and the fixed flag values,
// through cobra's hidden __complete command.
func TestCompletion(t *testing.T) {
	path := matrixCopy(t, nil)
	r := run(t, "__complete", "build", "-f", path, "--release", "")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "jetpack6.2\tJetPack 6.2")
	require.Contains(t, r.stdout, "jetpack7.2\tJetPack 7.2")
	r = run(t, "__complete", "plan", "-f", path, "--release", "")
	require.Contains(t, r.stdout, "jetpack7.0")
	r = run(t, "__complete", "build", "--progress", "")
	require.Equal(t, "auto\ntty\nplain\nrawjson\nquiet\nnone\n:4\n", strings.SplitAfter(r.stdout, ":4\n")[0])
	r = run(t, "__complete", "build", "--provenance", "")
	require.Contains(t, r.stdout, "mode=max")
	r = run(t, "__complete", "validate", "--format", "")
	require.Contains(t, r.stdout, "json")
}

func TestParseProvenance(t *testing.T) {
	for in, want := range map[string]string{"": "", "false": "", "true": "mode=min", "min": "mode=min", "max": "mode=max",
		"mode=min": "mode=min", "mode=max,version=v1": "mode=max,version=v1"} {
		got, err := parseProvenance(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"mode=full", "yes please"} {
		_, err := parseProvenance(bad)
		require.Equal(t, ExitUsage, ExitCode(err), bad)
		require.ErrorContains(t, err, "--provenance")
	}
}
