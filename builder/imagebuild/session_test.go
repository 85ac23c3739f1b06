package imagebuild

import (
	"errors"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"
)

func TestHasLocalCache(t *testing.T) {
	tests := []struct {
		entries []client.CacheOptionsEntry
		want    bool
	}{
		{entries: nil, want: false},
		{entries: []client.CacheOptionsEntry{{Type: "registry", Attrs: map[string]string{"ref": "127.0.0.1:5000/cache"}}}, want: false},
		{entries: []client.CacheOptionsEntry{{Type: "inline"}, {Type: "local", Attrs: map[string]string{"dest": "/tmp/cache"}}}, want: true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, hasLocalCache(tt.entries), "%+v", tt.entries)
	}
}

// The shared session's key names the folders: the same folders give the
// same key on every run, other folders another.
func TestLocalsKey(t *testing.T) {
	j := &releaseJob{contextDir: "/src/tei", dockerfileDir: "/src/tei/dockerfiles"}
	same := &releaseJob{contextDir: "/src/tei", dockerfileDir: "/src/tei/dockerfiles"}
	other := &releaseJob{contextDir: "/src/other", dockerfileDir: "/src/tei/dockerfiles"}
	require.Equal(t, j.localsKey("/opt/jetbake"), same.localsKey("/opt/jetbake"))
	require.NotEqual(t, j.localsKey("/opt/jetbake"), other.localsKey("/opt/jetbake"))
	require.NotEqual(t, j.localsKey("/opt/jetbake"), j.localsKey("/opt/other"))
	require.Regexp(t, `^jetbake-[0-9a-f]{16}$`, j.localsKey("/opt/jetbake"))
}

// Without a shared session the smoke run is solved inline: nothing is
// handed over and the build's own error stands.
func TestDeferredSmokeInline(t *testing.T) {
	var d *deferredSmoke
	require.Nil(t, d.hand())
	failed := errors.New("build failed")
	require.Equal(t, failed, d.wait(failed))
	require.NoError(t, d.wait(nil))
}

// A build that failed before handing its smoke run over returns its own
// error; one that never started a run succeeds with the build.
func TestDeferredSmokeNotHanded(t *testing.T) {
	d := newDeferredSmoke(t.Context(), Node{}, nil, nil, nil)
	failed := errors.New("build failed")
	require.Equal(t, failed, d.wait(failed))
	d = newDeferredSmoke(t.Context(), Node{}, nil, nil, nil)
	require.NoError(t, d.wait(nil))
}

// A shared session that ended is not used again.
func TestSharedSessionAlive(t *testing.T) {
	ss := &sharedSession{ended: make(chan struct{})}
	require.True(t, ss.alive())
	close(ss.ended)
	require.False(t, ss.alive())
}
