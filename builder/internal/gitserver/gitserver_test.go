package gitserver

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lsRemote runs git ls-remote on url as a client with no configuration.
func lsRemote(t *testing.T, url string, extra ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", append(append([]string{}, extra...), "ls-remote", url)...)
	cmd.Env = []string{"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "HOME=/dev/null", "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestServer(t *testing.T) {
	ctx := t.Context()
	s, err := Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	src := t.TempDir()
	repo, err := s.Create(ctx, "router.git")
	require.NoError(t, err)
	defer repo.Close()
	c1, err := repo.Commit(ctx, "main", "first", "", src, map[string]string{"README": "one\n"})
	require.NoError(t, err)
	require.NoError(t, repo.Tag(ctx, "v1.0.0", c1, true))
	c2, err := repo.Commit(ctx, "release", "second", "", "", map[string]string{"README": "two\n"})
	require.NoError(t, err)
	require.NotEqual(t, c1, c2)
	parent, err := repo.RevParse(ctx, c2+"^")
	require.NoError(t, err)
	require.Equal(t, c1, parent, "a new branch starts at the last commit")
	c3, err := repo.Commit(ctx, "main", "third", "", "", nil)
	require.NoError(t, err)
	parent, err = repo.RevParse(ctx, c3+"^")
	require.NoError(t, err)
	require.Equal(t, c1, parent, "main goes on from its own commit")
	out, err := exec.Command("git", "--git-dir="+repo.Dir, "show", "-s", "--format=%B", c3).Output()
	require.NoError(t, err)
	require.Equal(t, "third\n\n", string(out))
	tagObj, err := repo.RevParse(ctx, "v1.0.0")
	require.NoError(t, err)
	require.NotEqual(t, c1, tagObj, "an annotated tag is an object of its own")

	for _, url := range []string{s.GitURL("router.git"), s.HTTPURL("router.git")} {
		out, err := lsRemote(t, url)
		require.NoError(t, err, out)
		require.Contains(t, out, c3+"\trefs/heads/main", url)
		require.Contains(t, out, c2+"\trefs/heads/release", url)
		require.Contains(t, out, tagObj+"\trefs/tags/v1.0.0\n", url)
		require.Contains(t, out, c1+"\trefs/tags/v1.0.0^{}", url)
	}

	// The same commits from the same steps.
	again, err := s.Create(ctx, "again.git")
	require.NoError(t, err)
	defer again.Close()
	d1, err := again.Commit(ctx, "main", "first", "", src, map[string]string{"README": "one\n"})
	require.NoError(t, err)
	require.Equal(t, c1, d1)

	t.Run("a private repository needs its token over HTTP", func(t *testing.T) {
		s.Private("router.git", "s3cret")
		out, err := lsRemote(t, s.HTTPURL("router.git"))
		require.Error(t, err)
		require.Contains(t, out, "terminal prompts disabled")
		out, err = lsRemote(t, strings.Replace(s.HTTPURL("router.git"), "http://", "http://x-access-token:wrong@", 1))
		require.Error(t, err)
		require.Contains(t, out, "Authentication failed")
		out, err = lsRemote(t, strings.Replace(s.HTTPURL("router.git"), "http://", "http://x-access-token:s3cret@", 1))
		require.NoError(t, err, out)
		require.Contains(t, out, c1)
		reqs := s.Requests()
		require.Equal(t, 401, reqs[len(reqs)-3].Status)
		require.True(t, reqs[len(reqs)-1].Authorized)
	})
}
