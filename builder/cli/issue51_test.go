package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
	// validate's finding exits 1; plan, given an invalid matrix, 2 (bad input).
	for args, code := range map[string]int{"validate": ExitFailure, "plan": ExitUsage} {
		r := run(t, args)
		require.Equal(t, code, r.code, "%s: %s", args, r.stderr)
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

// init --app pytorch writes bases whose torch and Python the table knows,
// and validate warns, with line and column, about the placeholders init
// writes without --repository and --source; it still exits 0 (issue 51
// item 7: plan said "torch unknown, Python unknown", validate said nothing).
func TestInitAppPlaceholders(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	r := run(t, "init", "--app", "pytorch")
	require.Equal(t, ExitOK, r.code, r.stderr)

	r = run(t, "plan")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.NotContains(t, r.stdout, "unknown")
	require.Contains(t, r.stdout, "base:         nvcr.io/nvidia/pytorch:25.08-py3 (SBSA CUDA 13.0, from the table), torch 2.8.0a0, Python 3.12")

	r = run(t, "validate")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "matrix.json: app app, 2 releases, 2 SM targets, 4 tags: ok")
	require.Equal(t, `matrix.json:17:19: warning: image.repository: "ghcr.io/example/router": is the placeholder 'jetbake init' writes: `+
		`images pushed there would go to a repository that is not yours; fix: set it to your own image repository, such as ghcr.io/ORG/NAME`+"\n"+
		`matrix.json:18:15: warning: image.source: "https://github.com/example/router": is the placeholder 'jetbake init' writes: `+
		`every image's org.opencontainers.image.source would name a repository that is not yours; fix: set it to your repository's URL, such as https://github.com/ORG/NAME`+"\n",
		r.stderr)

	r = run(t, "validate", "--format", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var doc struct {
		OK       bool
		Warnings []struct {
			Path string
			Line int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.True(t, doc.OK)
	require.Len(t, doc.Warnings, 2)
	require.Equal(t, "image.repository", doc.Warnings[0].Path)
	require.Equal(t, 17, doc.Warnings[0].Line)

	r = run(t, "validate", "--format", "github")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "::warning file=matrix.json,line=17,col=19,title=image.repository::")

	// The user's own repository: no warning.
	other := t.TempDir()
	t.Chdir(other)
	r = run(t, "init", "--app", "pytorch", "--repository", "ghcr.io/acme/app", "--source", "https://github.com/acme/app")
	require.Equal(t, ExitOK, r.code, r.stderr)
	r = run(t, "validate")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Empty(t, r.stderr)
}

// evidence add's registry fault is one line, naming the file, whose fix
// names --timeout as every registry command's does; no summary line
// follows (issue 51 item 9).
func TestEvidenceAddRegistryFault(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	repo := strings.TrimPrefix(srv.URL, "http://") + "/jetbake/router"
	probe := probeFile(t, nil)
	r := runEv(t, "evidence", "add", probe, "--matrix", supportedMatrix(t), "--repository", repo, "--timeout", "300ms")
	require.Equal(t, ExitFailure, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, probe+": cannot tell which release "+probeDigest+" was built for: cannot look up "+repo+"@"+probeDigest+
		": the registry did not answer in time; fix: check that the registry is up and reachable, or give it more time with --timeout\n", r.stderr)
}
