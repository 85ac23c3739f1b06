package imagebuild

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/gitcontext"
)

// The build's options reach its git source: the lock's pin and the
// session's credentials.
func TestNewGitSource(t *testing.T) {
	const commit = "a9bbc3f78802bf57d53e5cfaa1a60788d326633e"
	o := &options{}
	require.Nil(t, o.newGitSource("/src/router"), "a local folder")
	WithGitPin(commit, "refs/tags/v1.0.0", "matrix.lock.json")(o)
	WithGitCredentials("GIT_AUTH_TOKEN.github.com")(o)
	g := o.newGitSource("https://github.com/acme/router.git#v1.0.0")
	require.Equal(t, commit, g.Pin)
	require.Equal(t, "matrix.lock.json", g.PinnedBy())
	require.Equal(t, "refs/tags/v1.0.0", g.Describer.LockedRef)
	require.Equal(t, []string{"GIT_AUTH_TOKEN.github.com"}, g.Describer.Credentials)
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
