package gitcontext

import (
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/dfgitutil"
	"github.com/stretchr/testify/require"
)

const commit = "a9bbc3f78802bf57d53e5cfaa1a60788d326633e"

func TestPinned(t *testing.T) {
	for _, tc := range []struct{ context, want string }{
		{"https://github.com/huggingface/text-embeddings-inference.git#v1.8.0",
			"https://github.com/huggingface/text-embeddings-inference.git?checksum=" + commit + "&ref=v1.8.0"},
		{"http://127.0.0.1:8080/embedder.git#v1.8.0:services/router",
			"http://127.0.0.1:8080/embedder.git?checksum=" + commit + "&ref=v1.8.0&subdir=services%2Frouter"},
		{"git://127.0.0.1:9418/router.git?ref=release-1.8&keep-git-dir=true&submodules=false",
			"git://127.0.0.1:9418/router.git?checksum=" + commit + "&keep-git-dir=true&ref=release-1.8&submodules=false"},
		{"git@github.com:acme/router.git#v1.0.0", "git@github.com:acme/router.git?checksum=" + commit + "&ref=v1.0.0"},
		{"github.com/acme/router#v1.0.0", "github.com/acme/router?checksum=" + commit + "&ref=v1.0.0"},
		// A context that pins its own commit keeps it.
		{"https://github.com/acme/router.git?ref=v1&checksum=abc1234", "https://github.com/acme/router.git?ref=v1&checksum=abc1234"},
	} {
		c, ok := Parse(tc.context)
		require.True(t, ok, tc.context)
		got := c.Pinned(commit)
		require.Equal(t, tc.want, got)
		// BuildKit parses the pinned form to the same source, with the checksum.
		back, isGit, err := dfgitutil.ParseGitRef(got)
		require.NoError(t, err)
		require.True(t, isGit)
		want := *c.Ref
		if want.Checksum == "" {
			want.Checksum = commit
		}
		require.Equal(t, want, *back, tc.context)
		require.Equal(t, tc.context, c.Pinned(""), "no commit, no change")
	}
}

func TestHostAndSecretIDs(t *testing.T) {
	for _, tc := range []struct {
		context, host string
		ids           []string
	}{
		{"https://github.com/acme/router.git#v1", "github.com",
			[]string{"GIT_AUTH_HEADER.github.com", "GIT_AUTH_TOKEN.github.com", "GIT_AUTH_HEADER", "GIT_AUTH_TOKEN"}},
		{"http://127.0.0.1:8080/router.git#v1", "127.0.0.1:8080",
			[]string{"GIT_AUTH_HEADER.127.0.0.1:8080", "GIT_AUTH_TOKEN.127.0.0.1:8080", "GIT_AUTH_HEADER", "GIT_AUTH_TOKEN"}},
		{"git@github.com:acme/router.git#v1", "", []string{"GIT_AUTH_HEADER", "GIT_AUTH_TOKEN"}},
		// BuildKit fetches it as https://github.com/acme/router.
		{"github.com/acme/router#v1", "github.com",
			[]string{"GIT_AUTH_HEADER.github.com", "GIT_AUTH_TOKEN.github.com", "GIT_AUTH_HEADER", "GIT_AUTH_TOKEN"}},
	} {
		c, ok := Parse(tc.context)
		require.True(t, ok)
		require.Equal(t, tc.host, c.Host(), tc.context)
		require.Equal(t, tc.ids, c.SecretIDs(), tc.context)
		require.False(t, c.HasPassword())
	}
	_, ok := Parse("./router")
	require.False(t, ok)
}

func TestRefNames(t *testing.T) {
	require.Equal(t, "v1.8.0", RefName("refs/tags/v1.8.0"))
	require.Equal(t, "main", RefName("refs/heads/main"))
	require.Equal(t, "tag", RefKind("refs/tags/v1.8.0"))
	require.Equal(t, "branch", RefKind("refs/heads/main"))
	require.Equal(t, "commit", RefKind(commit))
	require.Equal(t, "ref", RefKind("refs/pull/1/head"))
}
