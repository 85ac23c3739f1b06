package imagebuild

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

var errTest = errors.New("registry down")

func TestResolveCache(t *testing.T) {
	rc := newResolveCache()
	calls := 0
	resolve := func() (string, []byte, error) { calls++; return "sha256:1", []byte("{}"), nil }
	for range 3 {
		d, cfg, err := rc.get(t.Context(), "ref", resolve)
		require.NoError(t, err)
		require.Equal(t, "sha256:1", d)
		require.Equal(t, []byte("{}"), cfg)
	}
	require.Equal(t, 1, calls, "one resolve per reference per build")
	_, _, err := rc.get(t.Context(), "bad", func() (string, []byte, error) { return "", nil, errTest })
	require.ErrorIs(t, err, errTest)
	d, _, err := rc.get(t.Context(), "bad", resolve)
	require.NoError(t, err, "a failed resolve is tried again")
	require.Equal(t, "sha256:1", d)
}
