package imagebuild

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/gitcontext"
)

func TestNewGitSource(t *testing.T) {
	const commit = "a9bbc3f78802bf57d53e5cfaa1a60788d326633e"
	o := &options{}
	require.Nil(t, o.newGitSource("/src/router"), "a local folder")

	g := o.newGitSource("https://github.com/acme/router.git#v1.0.0")
	require.Empty(t, g.pin)
	require.Empty(t, g.pinnedBy(), "nothing pins it: the build takes what the tag names")

	WithGitPin(commit, "refs/tags/v1.0.0", "matrix.lock.json")(o)
	WithGitCredentials("GIT_AUTH_TOKEN.github.com")(o)
	g = o.newGitSource("https://github.com/acme/router.git#v1.0.0")
	require.Equal(t, commit, g.pin)
	require.Equal(t, "matrix.lock.json", g.pinnedBy())
	require.Equal(t, "https://github.com/acme/router.git?checksum="+commit+"&ref=v1.0.0", g.context.Pinned(g.pin))
	require.Equal(t, []string{"GIT_AUTH_TOKEN.github.com"}, g.describer.Credentials)

	// The context's own checksum wins over the lock's.
	g = o.newGitSource("https://github.com/acme/router.git?ref=v1.0.0&checksum=abc1234")
	require.Empty(t, g.pin)
	require.Equal(t, PinnedByChecksum, g.pinnedBy())
	require.Empty(t, g.describer.LockFile)
}

func TestDescribeGitError(t *testing.T) {
	o := &options{}
	j := &releaseJob{opts: &options{}, gitContext: "http://127.0.0.1:1/router.git#v9", git: o.newGitSource("http://127.0.0.1:1/router.git#v9")}
	raw := errors.New(`failed to solve: failed to load cache key: repository does not contain ref v9, output: ""`)
	var described *gitcontext.Error
	require.ErrorAs(t, j.describeGitError(raw), &described)
	require.Contains(t, described.Error(), "has no tag or branch v9")

	other := errors.New("process did not complete successfully: exit code: 1")
	require.Same(t, other, j.describeGitError(other))

	// The resolve's own sentence wins over what comes back through BuildKit.
	j.gitErr = &gitcontext.Error{Context: "x", Cause: "resolved", Fix: "fix"}
	require.Equal(t, j.gitErr, j.describeGitError(errors.New("failed to solve: router.context ...")))

	local := &releaseJob{opts: &options{}}
	require.Same(t, raw, local.describeGitError(raw), "a local context has no git failures")
}
