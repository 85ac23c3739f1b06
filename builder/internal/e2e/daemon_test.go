package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/daemon"
)

// Two jetbake runs share a local buildkitd: the first to finish leaves it
// running for the other, the last one stops it; --keep-daemon keeps it.
func TestLocalDaemonIsStoppedByTheLastUser(t *testing.T) {
	env := prerequisites(t)
	ctx := t.Context()
	state := t.TempDir()
	connect := func(keep bool) *daemon.Connection {
		c, err := daemon.Connect(ctx, daemon.WithBuildkitd(filepath.Join(env.BinDir(), "buildkitd")),
			daemon.WithStateDir(state), daemon.WithKeepDaemon(keep))
		require.NoError(t, err)
		return c
	}
	answers := func() bool {
		c, err := client.New(ctx, "unix://"+filepath.Join(state, "buildkitd.sock"))
		if err != nil {
			return false
		}
		defer c.Close()
		pingCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err = c.Info(pingCtx)
		return err == nil
	}

	first := connect(false)
	require.True(t, first.Started)
	require.NoError(t, daemon.CheckPlatform(ctx, first.Client, "linux/arm64"), "QEMU lets the runc worker build arm64")
	err := daemon.CheckPlatform(ctx, first.Client, "linux/s390x")
	require.ErrorContains(t, err, "no buildkitd worker builds linux/s390x")
	require.ErrorContains(t, err, "register QEMU user emulation", "the error says how to fix it")
	second := connect(false)
	require.False(t, second.Started, "the second run reuses the daemon")
	require.NoError(t, first.Close())
	require.True(t, answers(), "the daemon outlives the run that started it while another uses it")
	require.NoError(t, second.Close())
	require.False(t, answers(), "the last run stops it")

	kept := connect(true)
	require.True(t, kept.Started)
	t.Cleanup(func() { _ = kept.Kill() }) // this test started it: stop it at the end
	require.NoError(t, kept.Close())
	require.True(t, answers(), "--keep-daemon leaves it running")
	again := connect(false)
	require.False(t, again.Started)
	require.NoError(t, again.Close())
	require.True(t, answers(), "a kept daemon is not jetbake's to stop")
}

// prerequisites is the environment of an end-to-end test that starts its
// own daemons: the checkout, with runc, QEMU and buildkitd at hand. It
// skips only under -short (make test-unit); make test never skips it.
func prerequisites(t *testing.T) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: runs without -short (make test)")
	}
	root, err := FindRepoRoot()
	require.NoError(t, err)
	env := &Env{RepoRoot: root}
	require.NoError(t, env.CheckPrerequisites())
	return env
}
