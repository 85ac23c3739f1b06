package imagebuild

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

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

// A smoke run that fails stops the release's build, and the release fails

// with the smoke run's error, not with the cancellation it caused.

func TestDeferredSmokeStopsTheBuild(t *testing.T) {
	d := newDeferredSmoke(t.Context(), Node{}, nil, nil, nil)
	buildCtx := d.buildContext(t.Context())
	d.done = make(chan error, 1)
	failed := errors.New("router-87 --version (exit 127) fails on the runtime base")
	d.stopBuild(failed) // as the smoke run's goroutine does
	d.done <- failed
	require.Error(t, buildCtx.Err(), "the build is stopped")
	require.Equal(t, failed, d.wait(context.Canceled))

	// A build that fails on its own keeps its error and stops the smoke run.
	d = newDeferredSmoke(t.Context(), Node{}, nil, nil, nil)
	d.buildContext(t.Context())
	d.done = make(chan error, 1)
	d.done <- context.Canceled
	own := errors.New("export failed")
	require.Equal(t, own, d.wait(own))
	require.Error(t, d.ctx.Err(), "the smoke run is stopped")
}
