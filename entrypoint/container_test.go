package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/cctest"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// A fictional future Jetson is only rows of the table: detection, the
// host rule and the choice accept it with no code change (and the probe:
// jetbake-probe's TestFutureJetsonProbe).
func TestFutureJetsonEntrypoint(t *testing.T) {
	root := eptest.FutureSysroot(t)
	env := eptest.BaseEnv(root, "JETBAKE_CUDAPROBE="+eptest.Build(t).CUDAProbe, "FAKE_CUDA_MAJOR=12", "FAKE_CUDA_MINOR=5",
		"FAKE_CUDA_DRIVER_VERSION=14000")

	cfg := newConfig(nil, env)
	cfg.Table = cctest.FutureTable()
	img, err := detect.LoadImage(cfg.Root, cfg.Table)
	require.NoError(t, err)
	h := detect.Detect(t.Context(), &cfg.Config, detect.WantDriver(&cfg.Config, img))
	require.Equal(t, detect.PathFast, h.Path)
	require.Equal(t, cctest.FutureSM(), h.GPU)
	d := detect.Decide(&cfg.Config, img, h)
	require.Empty(t, d.Failure)
	require.Equal(t, "/usr/local/bin/router-125", d.Choice)
	require.Equal(t, "Jetson Future, SM 12.5", cfg.Table.Describe(h.GPU))

	// The shipped table does not know soc_id 41: no fast path, no GPU.
	plain := newConfig(nil, env)
	h = detect.Detect(t.Context(), &plain.Config, false)
	require.Equal(t, detect.PathFull, h.Path)
}
