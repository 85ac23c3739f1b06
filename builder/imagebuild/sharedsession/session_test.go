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
