package routergit

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNew(t *testing.T) {
	const commit = "a9bbc3f78802bf57d53e5cfaa1a60788d326633e"
	creds := []string{"GIT_AUTH_TOKEN.github.com"}
	require.Nil(t, New("/src/router", nil, "", "", ""), "a local folder")

	g := New("https://github.com/acme/router.git#v1.0.0", nil, "", "", "")
	require.Empty(t, g.Pin)
	require.Empty(t, g.PinnedBy(), "nothing pins it: the build takes what the tag names")

	g = New("https://github.com/acme/router.git#v1.0.0", creds, commit, "refs/tags/v1.0.0", "matrix.lock.json")
	require.Equal(t, commit, g.Pin)
	require.Equal(t, "matrix.lock.json", g.PinnedBy())
	require.Equal(t, "https://github.com/acme/router.git?checksum="+commit+"&ref=v1.0.0", g.Context.Pinned(g.Pin))
	require.Equal(t, creds, g.Describer.Credentials)

	// The context's own checksum wins over the lock's.
	g = New("https://github.com/acme/router.git?ref=v1.0.0&checksum=abc1234", creds, commit, "refs/tags/v1.0.0", "matrix.lock.json")
	require.Empty(t, g.Pin)
	require.Equal(t, PinnedByChecksum, g.PinnedBy())
	require.Empty(t, g.Describer.LockFile)
}
