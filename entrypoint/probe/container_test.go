package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/cctest"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// The documented probe command,
//
//	docker run --rm --runtime nvidia --entrypoint jetbake-probe -e JETBAKE_IMAGE_DIGEST=... IMAGE --smoke
//
// passes on sysroots shaped like a default `docker run --runtime nvidia`:
// the device tree masked, soc_id, family and machine visible, the
// runtime's nv_tegra_release and libcuda where the runtime mounts it.
func TestProbeOnContainerShapedHosts(t *testing.T) {
	tests := []struct {
		host, image, libDir string
		env                 []string
		class, soc, l4t     string
	}{
		{host: "agx-orin-container", image: "jetpack6", libDir: "/usr/lib/aarch64-linux-gnu/nvidia",
			env:   []string{"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=12060"},
			class: "Jetson AGX Orin", soc: "tegra234", l4t: "36.4.7"},
		{host: "agx-thor-container", image: "jetpack7.0", libDir: "/usr/lib/aarch64-linux-gnu",
			env:   []string{"FAKE_CUDA_MAJOR=11", "FAKE_CUDA_MINOR=0", "FAKE_CUDA_DRIVER_VERSION=13000"},
			class: "Jetson AGX Thor", soc: "tegra264", l4t: "38.2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			root := eptest.NewSysroot(t, tt.host, tt.image)
			eptest.InstallLibcuda(t, root, tt.libDir)
			r := runProbeIn(t, root, "arm64", []string{"--smoke"}, append(tt.env, "JETBAKE_IMAGE_DIGEST="+testDigest)...)
			require.Equal(t, 0, r.code, r.stderr+r.stdout)
			require.True(t, r.ev.Result.Pass)
			require.Equal(t, tt.class, r.ev.Host.DeviceClass)
			require.Equal(t, tt.soc, r.ev.Host.SoC)
			require.Equal(t, tt.l4t, r.ev.Host.L4T)
			for _, c := range r.ev.Result.Checks {
				require.Equal(t, evidencespec.Passed, c.Status, "%s: %s", c.Name, c.Detail)
			}

			// A plain start takes the fast path on the same host.
			cfg := detect.NewConfig(eptest.BaseEnv(root, append(tt.env, "JETBAKE_CUDAPROBE="+eptest.Build(t).CUDAProbe)...))
			img, err := detect.LoadImage(cfg.Root, cfg.Table)
			require.NoError(t, err)
			h := detect.Detect(t.Context(), &cfg, detect.WantDriver(&cfg, img))
			require.Equal(t, detect.PathFast, h.Path, h.PathWhy)
			d := detect.Decide(&cfg, img, h)
			require.NotEmpty(t, d.Choice, d.Failure)
			require.Equal(t, "/sys/devices/soc0/machine", h.HostFiles[1].Name)
		})
	}
}

// A fictional future Jetson is only rows of the table: the probe accepts
// it with no code change (jetbake-entrypoint's TestFutureJetsonEntrypoint
// starts it).
func TestFutureJetsonProbe(t *testing.T) {
	root := eptest.FutureSysroot(t)
	env := eptest.BaseEnv(root, "JETBAKE_CUDAPROBE="+eptest.Build(t).CUDAProbe, "FAKE_CUDA_MAJOR=12", "FAKE_CUDA_MINOR=5",
		"FAKE_CUDA_DRIVER_VERSION=14000", "JETBAKE_IMAGE_DIGEST="+testDigest)

	pc, err := parseArgs([]string{"--smoke"}, env)
	require.NoError(t, err)
	pc.Table = cctest.FutureTable()
	var stdout, stderr bytes.Buffer
	code := probeMain(t.Context(), &pc, &stdout, &stderr, probeSetup{now: probeTime(), arch: "arm64"})
	require.Equal(t, 0, code, stderr.String()+stdout.String())
	require.Contains(t, stdout.String(), `"device_class": "`+cctest.FutureModule+`"`)
}
