package sharedsession

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A shared session that ended is not used again.
func TestSharedSessionAlive(t *testing.T) {
	ss := &Session{ended: make(chan struct{})}
	require.True(t, ss.Alive())
	close(ss.ended)
	require.False(t, ss.Alive())
}

// The shared session's key names the folders: the same folders give the
// same key on every run, other folders another.
func TestKey(t *testing.T) {
	key := Key("/src/tei", "/src/tei/dockerfiles", "/opt/jetbake")
	require.Equal(t, key, Key("/src/tei", "/src/tei/dockerfiles", "/opt/jetbake"))
	require.NotEqual(t, key, Key("/src/other", "/src/tei/dockerfiles", "/opt/jetbake"))
	require.NotEqual(t, key, Key("/src/tei", "/src/tei/dockerfiles", "/opt/other"))
	require.NotEqual(t, key, Key("", "/src/tei/dockerfiles", "/opt/jetbake"), "a git context has no folder")
	require.Regexp(t, `^jetbake-[0-9a-f]{16}$`, key)
}
