package gitcontext

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/moby/buildkit/session/secrets"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/gitserver"
)

func TestParseLsRemote(t *testing.T) {
	const (
		tagObj = "2e10b11ba1ad72cc274820c77848ff4f027e6e3c"
		c1     = "a9bbc3f78802bf57d53e5cfaa1a60788d326633e"
		c2     = "3c1c0dbad695150b7f02775a7f8964f74a0df4ab"
	)
	for _, tc := range []struct {
		name, ref, output string
		want              Commit
		err               string
	}{
		{name: "an annotated tag is its commit", ref: "v1.8.0",
			output: tagObj + "\trefs/tags/v1.8.0\n" + c1 + "\trefs/tags/v1.8.0^{}\n",
			want:   Commit{Ref: "refs/tags/v1.8.0", Commit: c1, object: tagObj}},
		{name: "a lightweight tag", ref: "light", output: c2 + "\trefs/tags/light\n",
			want: Commit{Ref: "refs/tags/light", Commit: c2, object: c2}},
		{name: "a branch wins over a tag of the same name", ref: "v1",
			output: c1 + "\trefs/heads/v1\n" + tagObj + "\trefs/tags/v1\n" + c2 + "\trefs/tags/v1^{}\n",
			want:   Commit{Ref: "refs/heads/v1", Commit: c1, object: c1}},
		{name: "a full ref", ref: "refs/tags/v1.8.0",
			output: tagObj + "\trefs/tags/v1.8.0\n" + c1 + "\trefs/tags/v1.8.0^{}\n",
			want:   Commit{Ref: "refs/tags/v1.8.0", Commit: c1, object: tagObj}},
		{name: "another ref kind", ref: "refs/pull/1/head", output: c2 + "\trefs/pull/1/head\n",
			want: Commit{Ref: "refs/pull/1/head", Commit: c2, object: c2}},
		{name: "nothing listed", ref: "v9.9.9", output: "", err: `repository does not contain ref v9.9.9, output: ""`},
		{name: "not a commit", ref: "v1", output: "xyz\trefs/tags/v1\n", err: `invalid commit sha "xyz"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLsRemote(tc.ref, tc.output)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func FuzzParseLsRemote(f *testing.F) {
	f.Add("v1.8.0", "2e10b11ba1ad72cc274820c77848ff4f027e6e3c\trefs/tags/v1.8.0\na9bbc3f78802bf57d53e5cfaa1a60788d326633e\trefs/tags/v1.8.0^{}\n")
	f.Add("main", "a9bbc3f78802bf57d53e5cfaa1a60788d326633e\trefs/heads/main\r\n")
	f.Fuzz(func(t *testing.T, ref, output string) {
		c, err := ParseLsRemote(ref, output)
		if err != nil {
			return
		}
		if len(c.Commit) != 40 && len(c.Commit) != 64 {
			t.Fatalf("commit %q is not a full commit", c.Commit)
		}
		if !strings.HasPrefix(c.Ref, "refs/") {
			t.Fatalf("ref %q is not a full ref", c.Ref)
		}
	})
}

// Resolve against git daemon and git http-backend, a private repository
// with and without its token, and BuildKit's checksum check.
func TestResolve(t *testing.T) {
	ctx := t.Context()
	srv := gitserver.New(t)
	repo, c1, c2, err := srv.Tagged(ctx, "router.git", "v1.8.0", "release-1.8")
	require.NoError(t, err)
	defer repo.Close()
	private, _, p1, err := srv.Tagged(ctx, "private/router.git", "v1.8.0", "main")
	require.NoError(t, err)
	defer private.Close()
	const token = "jetbake-test-token"
	srv.Private("private/router.git", token)

	resolve := func(context string, store map[string][]byte, credentials ...string) (Commit, error) {
		c, ok := Parse(context)
		require.True(t, ok, context)
		return c.Resolve(ctx, mapStore(store), Describer{Credentials: credentials, Fetcher: "this machine"})
	}
	for _, url := range []string{srv.GitURL("router.git"), srv.HTTPURL("router.git")} {
		got, err := resolve(url+"#v1.8.0", nil)
		require.NoError(t, err)
		require.Equal(t, "refs/tags/v1.8.0", got.Ref)
		require.Equal(t, c1, got.Commit)
		got, err = resolve(url+"#release-1.8", nil)
		require.NoError(t, err)
		require.Equal(t, Commit{Ref: "refs/heads/release-1.8", Commit: c2, object: c2}, got)
		got, err = resolve(url+"?ref=v1.8.0&checksum="+c1[:7], nil)
		require.NoError(t, err)
		require.Equal(t, c1, got.Commit)
	}
	got, err := resolve(srv.HTTPURL("router.git")+"#"+c2, nil)
	require.NoError(t, err)
	require.Equal(t, c2, got.Commit, "a commit is its own ref")

	_, err = resolve(srv.HTTPURL("router.git")+"?ref=v1.8.0&checksum="+c2, nil)
	var gerr *Error
	require.ErrorAs(t, err, &gerr)
	require.Contains(t, err.Error(), "the tag or branch v1.8.0 moved: the context's checksum pins commit "+c2+", the repository now has "+c1)

	_, err = resolve(srv.HTTPURL("router.git")+"#v9.9.9", nil)
	require.ErrorAs(t, err, &gerr)
	require.Contains(t, err.Error(), "has no tag or branch v9.9.9")

	_, err = resolve("http://git.jetbake.invalid/router.git#v1.8.0", nil)
	require.ErrorAs(t, err, &gerr)
	require.Contains(t, err.Error(), "the host git.jetbake.invalid is not known (no DNS name resolves to it): correct the host in the URL, or check the DNS and network of this machine")

	id := "GIT_AUTH_TOKEN." + srv.HTTPAddr
	got, err = resolve(srv.HTTPURL("private/router.git")+"#main", map[string][]byte{id: []byte(token)}, id)
	require.NoError(t, err)
	require.Equal(t, p1, got.Commit)
	got, err = resolve(srv.HTTPURL("private/router.git")+"#main", map[string][]byte{
		"GIT_AUTH_HEADER." + srv.HTTPAddr: []byte("basic eC1hY2Nlc3MtdG9rZW46amV0YmFrZS10ZXN0LXRva2Vu")}, "GIT_AUTH_HEADER."+srv.HTTPAddr)
	require.NoError(t, err, "a header as it is")
	require.Equal(t, p1, got.Commit)

	_, err = resolve(srv.HTTPURL("private/router.git")+"#main", nil)
	require.ErrorAs(t, err, &gerr)
	require.Contains(t, err.Error(), "asks for credentials (the repository is private, or does not exist) and none were given")
	_, err = resolve(srv.HTTPURL("private/router.git")+"#main", map[string][]byte{id: []byte("wrong-" + token)}, id)
	require.ErrorAs(t, err, &gerr)
	require.Contains(t, err.Error(), "refused the credentials given ("+id+")")
	require.NotContains(t, err.Error(), token)
	require.NotContains(t, errors.Unwrap(err).Error(), token, "not even in git's own words")
}

// mapStore is a secrets.SecretStore of fixed secrets.
type mapStore map[string][]byte

func (m mapStore) GetSecret(_ context.Context, id string) ([]byte, error) {
	if v, ok := m[id]; ok {
		return v, nil
	}
	return nil, secrets.ErrNotFound
}
