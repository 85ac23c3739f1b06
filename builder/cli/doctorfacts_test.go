package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/internal/e2e"
)

// result is one run of the CLI (package cli_test: the test bed's hosts
// import the CLI).
type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), args, &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// doctor --facts on the test bed's JetPack 7.3 host views: the declared
// row (the facts file of the matrix that declares 7.3) names the host's
// JetPack and its driver's CUDA, in the table and in the node labels that
// jetbake fleet's affinities read. Without it, jetbake's table knows no L4T
// 39.3.0.
func TestDoctorDeclaredFacts(t *testing.T) {
	dir := t.TempDir()
	facts := filepath.Join(dir, e2e.DeclaredFactsFile)
	require.NoError(t, os.WriteFile(facts, []byte(e2e.DeclaredFacts), 0o644))
	for _, h := range e2e.DeclaredHostViews() {
		root := t.TempDir()
		require.NoError(t, h.WriteFacts(root))
		r := run(t, "doctor", "--sysroot", root, "--facts", facts, "--node-labels", "-")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "jetbake.feature.node.kubernetes.io/jetpack=7.3\n", h.Name)
		require.Contains(t, r.stdout, "jetbake.feature.node.kubernetes.io/cuda.driver=13.3\n", h.Name)
		require.Contains(t, r.stdout, "jetbake.feature.node.kubernetes.io/l4t=39.3.0\n", h.Name)

		r = run(t, "doctor", "--sysroot", root, "--facts", facts)
		require.Contains(t, r.stdout, "R39.3.0 (JetPack 7.3)", h.Name)
		require.Contains(t, r.stdout, "in the declared facts (JetPack 7.3)", h.Name)

		r = run(t, "doctor", "--sysroot", root, "--node-labels", "-")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "jetbake.feature.node.kubernetes.io/cuda.driver=13.2\n", "%s: R39's newest row in jetbake's own table", h.Name)
	}

	// A declared row that contradicts jetbake's table is bad input, named
	// at its file, line and field, as validate names it.
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(strings.Replace(e2e.DeclaredFacts, `"7.3"`, `"7.2"`, 1), `"39.3.0"`, `"39.2.0"`, 1)), 0o644))
	r := run(t, "doctor", "--sysroot", t.TempDir(), "--facts", bad)
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, bad+`:6:15: jetpacks[0].cuda: "13.3": contradicts jetbake's table, whose row for JetPack 7.2 has cuda "13.2"`)
	r = run(t, "doctor", "--sysroot", t.TempDir(), "--facts", filepath.Join(dir, "missing.json"))
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "missing.json")
}
