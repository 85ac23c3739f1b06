package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/host"
)

func TestNewConfig(t *testing.T) {
	cfg := newConfig([]string{"--explain", "--explain", "x"}, []string{"JETBAKE_SYSROOT=/tmp/r"})
	require.True(t, cfg.Explain)
	require.Equal(t, []string{"--explain", "x"}, cfg.routerArgs)
	require.Equal(t, host.Root("/tmp/r"), cfg.Root)
	cfg = newConfig(nil, nil)
	require.False(t, cfg.Explain)
	require.Equal(t, host.Root("/"), cfg.Root)
	cfg = newConfig(nil, []string{"JETBAKE_CUDAPROBE=/usr/local/bin/jetbake-cudaprobe"})
	require.Equal(t, "/usr/local/bin/jetbake-cudaprobe", cfg.ProbePath())
	require.True(t, newConfig([]string{"--probe"}, []string{"JETBAKE_EXPLAIN=yes"}).Explain)
	require.Equal(t, []string{"--probe", "--smoke"}, newConfig([]string{"--probe", "--smoke"}, nil).routerArgs, "--probe is the router's now")
}
