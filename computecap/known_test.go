package computecap

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The table knows the SMs of its SoCs (Thor's alias 10.1 too) and of its
// toolchain rows, with or without an arch-specific suffix, and no other.
func TestKnows(t *testing.T) {
	tab := DefaultTable()
	for _, s := range []string{"5.3", "6.2", "7.2", "8.7", "10.1", "11.0", "8.6", "9.0", "9.0a", "12.0", "12.1"} {
		require.True(t, tab.Knows(MustParse(s)), s)
	}
	for _, s := range []string{"9.9", "99.9", "3.5", "8.8", "12.5", "13.0"} {
		require.False(t, tab.Knows(MustParse(s)), s)
	}
}

func TestKnownSMs(t *testing.T) {
	require.Equal(t, "Jetson 5.3 (Nano/TX1), 6.2 (TX2), 7.2 (Xavier), 8.7 (Orin), 11.0 (Thor, also 10.1); "+
		"desktop and server GPUs 5.0, 5.2, 6.0, 6.1, 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 12.0, 12.1", knownText(DefaultTable().KnownSMs()))
	// A table without desktop rows lists the Jetsons only.
	tab := DefaultTable()
	tab.Toolchain = nil
	jetson, other := tab.KnownSMs()
	require.Empty(t, other)
	require.Equal(t, jetson, knownText(jetson, other))
}
