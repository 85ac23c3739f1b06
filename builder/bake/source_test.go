package bake

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitRepo makes a git work tree with one commit at time 1700000000 and
// returns its folder and the commit.
func gitRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=1700000000 +0000", "GIT_AUTHOR_DATE=1700000000 +0000")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	run("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "matrix.json"), []byte("{}\n"), 0o644))
	run("add", "matrix.json")
	run("commit", "-q", "-m", "matrix")
	head := run("rev-parse", "HEAD")
	return dir, head[:len(head)-1]
}

func TestReadSource(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir, head := gitRepo(t)
	matrix := filepath.Join(dir, "matrix.json")

	s, err := ReadSource(t.Context(), matrix, "", "")
	require.NoError(t, err)
	require.Equal(t, Source{Dir: dir, Revision: head, Epoch: 1700000000}, s, "git's HEAD and commit time")

	s, err = ReadSource(t.Context(), matrix, "v1.2.3", "42")
	require.NoError(t, err)
	require.Equal(t, Source{Dir: dir, Revision: "v1.2.3", Epoch: 42}, s, "what is given wins")

	t.Setenv("SOURCE_DATE_EPOCH", "7")
	s, err = ReadSource(t.Context(), matrix, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(7), s.Epoch, "the environment's over the commit time")

	require.NoError(t, os.WriteFile(matrix, []byte("{\"changed\": true}\n"), 0o644))
	s, err = ReadSource(t.Context(), matrix, "", "")
	require.NoError(t, err)
	require.True(t, s.Dirty, "an uncommitted change")
	s, err = ReadSource(t.Context(), matrix, "v1.2.3", "")
	require.NoError(t, err)
	require.False(t, s.Dirty, "a revision given is the caller's to describe")

	for _, bad := range []string{"yesterday", "-1", "1.5"} {
		_, err = ReadSource(t.Context(), matrix, "", bad)
		require.Equal(t, &EpochError{Value: bad}, err)
		require.True(t, err.(*EpochError).BadInput())
	}

	t.Setenv("SOURCE_DATE_EPOCH", "")
	outside := t.TempDir()
	s, err = ReadSource(t.Context(), filepath.Join(outside, "matrix.json"), "", "")
	require.NoError(t, err)
	require.Equal(t, Source{Dir: outside}, s, "without git: no revision, time 0")
}

// A relative matrix path whose folder cannot be made absolute (the
// working folder is gone) is an error, not an empty folder.
func TestReadSourceAbsError(t *testing.T) {
	gone := t.TempDir()
	t.Chdir(gone)
	require.NoError(t, os.Remove(gone))
	_, err := ReadSource(t.Context(), "matrix.json", "", "")
	require.ErrorContains(t, err, "the folder of matrix file matrix.json: ")
}
