package entrypointdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// check is Check for the binaries of every image.
func check(dir, toolCommit string) error {
	return Check(dir, toolCommit, "jetbake-entrypoint", "jetbake-cudaprobe", "jetbake-probe")
}

// binaries makes a folder holding the entrypoint binaries.
func binaries(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"jetbake-entrypoint", "jetbake-cudaprobe", "jetbake-probe"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("bin"), 0o755))
	}
	return dir
}

func TestCheckEntrypointDir(t *testing.T) {
	require.NoError(t, check(binaries(t), "abc"))

	err := check("", "")
	require.Equal(t, &Error{}, err)
	require.Contains(t, err.Error(), "WithEntrypointDir")

	half := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(half, "jetbake-entrypoint"), nil, 0o755))
	err = check(half, "")
	require.Equal(t, &Error{Dir: half, Missing: "jetbake-cudaprobe"}, err)
	require.Equal(t, "entrypoint folder "+half+" lacks jetbake-cudaprobe: cross-compile it for linux/arm64 into that folder", err.Error())
	require.NoError(t, os.WriteFile(filepath.Join(half, "jetbake-cudaprobe"), nil, 0o755))
	require.Equal(t, &Error{Dir: half, Missing: "jetbake-probe"}, check(half, ""))
}

// An entrypoint built from another commit than the jetbake that builds is refused.
// The binaries are built in a git repository of their own, made here: Go
// stamps vcs.revision only where .git is a folder, which it is not in a git
// worktree (.git is a file there), so the checkout's own commit cannot be
// relied on.
func TestCheckEntrypointRevision(t *testing.T) {
	dir := t.TempDir()
	commit := stampedBinaries(t, dir, "jetbake-entrypoint", "jetbake-cudaprobe", "jetbake-probe")
	require.Equal(t, commit, revision(filepath.Join(dir, "jetbake-entrypoint")))
	require.NoError(t, check(dir, commit))
	require.NoError(t, check(dir, ""), "no revision to compare with")
	err := check(dir, "2222222222222222")
	require.Equal(t, &Error{Dir: dir, Binary: filepath.Join(dir, "jetbake-entrypoint"), BuiltFrom: commit, Tool: "2222222222222222"}, err)
	require.ErrorContains(t, err, "was built from jetbake commit "+commit[:12]+" but this jetbake is commit 222222222222: build the entrypoint binaries")
	require.NoError(t, check(dir, commit[:12]), "a pseudo-version's 12-digit commit")
}

// stampedBinaries builds a small Go program, committed to a new git
// repository, into dir under each name with Go's VCS stamp, and returns the
// commit the stamp names.
func stampedBinaries(t *testing.T, dir string, names ...string) string {
	t.Helper()
	repo := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/stamped\n\ngo 1.21\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	runIn := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %v: %s", name, args, out)
		return strings.TrimSpace(string(out))
	}
	runIn("git", "init", "-q")
	runIn("git", "add", ".")
	runIn("git", "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "stamped")
	commit := runIn("git", "rev-parse", "HEAD")
	for _, name := range names {
		runIn("go", "build", "-trimpath", "-buildvcs=true", "-o", filepath.Join(dir, name), ".")
	}
	return commit
}
