package matrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoWith writes a git-like repository (a folder holding .git) with a
// stand-in router folder and Dockerfile in it, and the shipped matrix at
// ci/matrix.json with the router's context and Dockerfile set. It returns
// the matrix's path and the repository's folder.
// stagesDockerfile has the stages the shipped matrix's router names.
const stagesDockerfile = "ARG RUNTIME_BASE\nFROM scratch AS router\nFROM ${RUNTIME_BASE} AS runtime-base\n"

func repoWith(t *testing.T, context, dockerfile string) (string, string) {
	t.Helper()
	repo := t.TempDir()
	for _, d := range []string{".git", "ci", "router"} {
		require.NoError(t, os.MkdirAll(filepath.Join(repo, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, "router", "Dockerfile"), []byte(stagesDockerfile), 0o644))
	doc := shippedTree(t)
	section(doc, "router")["context"] = context
	section(doc, "router")["dockerfile"] = dockerfile
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	path := filepath.Join(repo, "ci", "matrix.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path, repo
}

// TestLoadKeepsPathsInTheRepository points the router's context and
// Dockerfile at the building machine's files, as a matrix in a pull
// request could: each is refused with the fix, and each passes once the
// user grants the folder with WithAllowRead.
func TestLoadKeepsPathsInTheRepository(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "config.json"), []byte(`{"auths": {}}`), 0o600))
	link := func(repo string) string {
		p := filepath.Join(repo, "router", "creds")
		require.NoError(t, os.Symlink(filepath.Join(outside, "config.json"), p))
		return "../router/creds"
	}
	tests := []struct {
		name, context, dockerfile string
		setup                     func(repo string) string // returns the Dockerfile when set
		path                      string
		grant                     func(repo string) string
	}{
		{name: "context /", context: "/", dockerfile: "../router/Dockerfile", path: "router.context", grant: func(string) string { return "/" }},
		{name: "context climbing out", context: "../../../../../../../..", dockerfile: "../router/Dockerfile", path: "router.context",
			grant: func(string) string { return "/" }},
		{name: "Dockerfile /etc/passwd", context: "../router", dockerfile: "/etc/passwd", path: "router.dockerfile",
			grant: func(string) string { return "/etc" }},
		{name: "Dockerfile climbing out", context: "../router", dockerfile: "../../../../../../../../etc/passwd", path: "router.dockerfile",
			grant: func(string) string { return "/etc/passwd" }},
		{name: "Dockerfile through a link", context: "../router", setup: link, path: "router.dockerfile",
			grant: func(string) string { return outside }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, repo := repoWith(t, tt.context, tt.dockerfile)
			if tt.setup != nil {
				df := tt.setup(repo)
				path, repo = rewriteRouter(t, path, repo, tt.context, df)
			}
			_, err := Load(path)
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			fe := find(verr.Errors, tt.path, "is outside the matrix's repository "+repo)
			require.NotNil(t, fe, "%v", err)
			require.Contains(t, fe.Fix, "move it into the repository, or grant read access to ")
			require.Contains(t, fe.Fix, " with WithAllowRead; a matrix from a pull request must not read this machine's files")
			require.Len(t, verr.Errors, 1, "%v", err)
			_, err = Load(path, WithGrantReadFix(func(p string) string { return "run with --allow fs.read=" + p }))
			require.ErrorAs(t, err, &verr)
			require.Contains(t, find(verr.Errors, tt.path, "is outside").Fix, "move it into the repository, or run with --allow fs.read=/", "a command words the grant")

			m, err := Load(path, WithAllowRead(tt.grant(repo)))
			require.NoError(t, err)
			require.Equal(t, repo, m.Root)
		})
	}
}

// rewriteRouter writes the matrix at path again with another Dockerfile.
func rewriteRouter(t *testing.T, path, repo, context, dockerfile string) (string, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	section(doc, "router")["context"], section(doc, "router")["dockerfile"] = context, dockerfile
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path, repo
}

func TestLoadAcceptsPathsInTheRepository(t *testing.T) {
	// The matrix is in ci/; the router is beside it, in the same git work tree.
	path, repo := repoWith(t, "../router", "../router/Dockerfile")
	m, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, repo, m.Root)
	require.Empty(t, m.Inside("../router"))
	require.NotEmpty(t, m.Inside("../.."))

	// Outside git, the matrix's own folder is the boundary.
	plain := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(plain, "sub", "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(plain, "sub", "src", "Dockerfile"), []byte(stagesDockerfile), 0o644))
	doc := shippedTree(t)
	section(doc, "router")["context"], section(doc, "router")["dockerfile"] = "src", "src/Dockerfile"
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	mp := filepath.Join(plain, "sub", "matrix.json")
	require.NoError(t, os.WriteFile(mp, data, 0o644))
	m, err = Load(mp)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(plain, "sub"), m.Root)
}

// parseEdited parses the shipped matrix changed by edit and returns its
// problems.
func parseEdited(t *testing.T, edit func(doc map[string]any)) *ValidationError {
	t.Helper()
	doc := shippedTree(t)
	edit(doc)
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	_, err = Parse(data)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	return verr
}

// TestParseRefusesControlCharacters puts NUL and escape characters into the
// router's env, cmd and smoke and the image's labels.
func TestParseRefusesControlCharacters(t *testing.T) {
	tests := []struct {
		name string
		edit func(doc map[string]any)
		path string
	}{
		{"NUL in an env value", func(d map[string]any) { section(d, "router")["env"] = map[string]any{"PORT": "80\x00"} }, "router.env.PORT"},
		{"NUL in a cmd argument", func(d map[string]any) { section(d, "router")["cmd"] = []any{"--json-output\x00--x"} }, "router.cmd[0]"},
		{"escape in a label", func(d map[string]any) { section(d, "image")["labels"] = map[string]any{"a": "\x1b]0;pwned\x07"} }, "image.labels.a"},
		{"line break in a smoke argument", func(d map[string]any) { section(d, "router")["smoke"] = []any{"--version\nrm"} }, "router.smoke[0]"},
		{"C1 control in hardware", func(d map[string]any) { release(d, 0)["hardware"] = []any{"Jetson \u009b2J"} }, "releases[0].hardware[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verr := parseEdited(t, tt.edit)
			fe := find(verr.Errors, tt.path, "holds the control character U+")
			require.NotNil(t, fe, "%v", verr)
			require.Len(t, verr.Errors, 1, "%v", verr)
			require.NotContains(t, verr.Error(), "\x00")
			require.NotContains(t, verr.Error(), "\x1b")
		})
	}
}

// TestParseLimitsNames gives a release a 300-character name: it would
// validate, then fail as a file name of the evidence store. Names are
// limited to what a tag, a file name and an annotation can carry.
func TestParseLimitsNames(t *testing.T) {
	verr := parseEdited(t, func(doc map[string]any) {
		release(doc, 0)["name"] = strings.Repeat("a", 300)
		section(doc, "router")["version"] = strings.Repeat("1", 129)
	})
	fe := find(verr.Errors, "releases[0].name", "is 300 characters long, more than the 128 that a tag, a file name and an OCI annotation can all carry")
	require.NotNil(t, fe, "%v", verr)
	require.Contains(t, fe.Value, "... (302 bytes)")
	require.NotNil(t, find(verr.Errors, "router.version", "is 129 characters long"), "%v", verr)
	require.Equal(t, 128, MaxNameLength)
}

func TestParseRefusesUncleanOutput(t *testing.T) {
	for _, out := range []string{"/usr/local/bin/../../../outside/escape.sh", "/usr/local/bin/./router", "/usr//bin/router", "/usr/bin/", "/"} {
		verr := parseEdited(t, func(doc map[string]any) { section(doc, "router")["output"] = out })
		require.NotNil(t, find(verr.Errors, "router.output", "is not a clean absolute path of a file"), "%s: %v", out, verr)
	}
}

// TestLoadRefusesAPipeAsDockerfile: jetbake reads the Dockerfile itself,
// and a named pipe there would block the build.
func TestLoadRefusesAPipeAsDockerfile(t *testing.T) {
	path, repo := repoWith(t, "../router", "../router/pipe")
	require.NoError(t, syscall.Mkfifo(filepath.Join(repo, "router", "pipe"), 0o644))
	_, err := Load(path)
	require.ErrorContains(t, err, "is not a regular file (a pipe, a device or a socket)")
}
