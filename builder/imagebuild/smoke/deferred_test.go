package smoke

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without a shared session the smoke run is solved inline: nothing is
// handed over and the build's own error stands.
func TestDeferredSmokeInline(t *testing.T) {
	var d *Deferred
	require.Equal(t, t.Context(), d.BuildContext(t.Context()))
	failed := errors.New("build failed")
	require.Equal(t, failed, d.Wait(failed))
	require.NoError(t, d.Wait(nil))
}

// A build that failed before handing its smoke run over returns its own
// error; one that never started a run succeeds with the build.
func TestDeferredSmokeNotHanded(t *testing.T) {
	d := NewDeferred(t.Context(), nil, nil, nil)
	failed := errors.New("build failed")
	require.Equal(t, failed, d.Wait(failed))
	d = NewDeferred(t.Context(), nil, nil, nil)
	require.NoError(t, d.Wait(nil))
}

// A smoke run that fails stops the release's build, and the release fails
// with the smoke run's error, not with the cancellation it caused.
func TestDeferredSmokeStopsTheBuild(t *testing.T) {
	d := NewDeferred(t.Context(), nil, nil, nil)
	buildCtx := d.BuildContext(t.Context())
	d.done = make(chan error, 1)
	failed := errors.New("router-87 --version (exit 127) fails on the runtime base")
	d.stopBuild(failed) // as the smoke run's goroutine does
	d.done <- failed
	require.Error(t, buildCtx.Err(), "the build is stopped")
	require.Equal(t, failed, d.Wait(context.Canceled))

	// A build that fails on its own keeps its error and stops the smoke run.
	d = NewDeferred(t.Context(), nil, nil, nil)
	d.BuildContext(t.Context())
	d.done = make(chan error, 1)
	d.done <- context.Canceled
	own := errors.New("export failed")
	require.Equal(t, own, d.Wait(own))
	require.Error(t, d.ctx.Err(), "the smoke run is stopped")
}
