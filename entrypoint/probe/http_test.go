package main

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRouterClientNothingListens: a port nothing listens on is refused at
// once, and the free port the kernel gives is on 127.0.0.1.
func TestRouterClientNothingListens(t *testing.T) {
	port, err := freeLoopbackPort()
	require.NoError(t, err)
	require.Positive(t, port)
	_, err = newRouterClient(port).do(t.Context(), "GET", "/health", nil, time.Second)
	require.ErrorContains(t, err, "connection refused")
}

// TestStopRouterKillsOneThatIgnoresSIGTERM: SIGTERM, the bound, SIGKILL.
func TestStopRouterKillsOneThatIgnoresSIGTERM(t *testing.T) {
	for _, tt := range []struct {
		script string
		ends   bool
	}{{"trap '' TERM; sleep 30 & wait; sleep 30", false}, {"sleep 30", true}} {
		cmd := exec.Command("sh", "-c", tt.script)
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		require.Equal(t, tt.ends, stopRouter(cmd, exited, 300*time.Millisecond), tt.script)
		require.Less(t, time.Since(start), 5*time.Second)
	}
}
