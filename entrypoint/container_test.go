package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/cctest"
	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// The documented probe command,
//
//	docker run --rm --runtime nvidia -e JETBAKE_IMAGE_DIGEST=... IMAGE --probe --smoke
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
			root := newSysroot(t, tt.host, tt.image)
			installLibcuda(t, root, tt.libDir)
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
			e := explainRun(t, root, append(tt.env, "JETBAKE_CUDAPROBE="+buildBinaries(t).probe)...)
			require.Equal(t, pathFast, e.Path, e.PathWhy)
			require.NotEmpty(t, e.Choice, e.Failure)
			require.Equal(t, "/sys/devices/soc0/machine", e.HostFiles[1].Name)
		})
	}
}

// A fictional future Jetson is only rows of the table: detection, the
// host rule, the choice and the probe accept it with no code change.
func TestFutureJetsonEntrypoint(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, host.SocIDPath, "41\n", 0o644)
	writeFile(t, root, host.SocFamilyPath, "Tegra\n", 0o644)
	writeFile(t, root, host.SocMachinePath, cctest.FutureMachine+"\n", 0o644)
	writeFile(t, root, host.TegraReleasePath, standinRelease(cctest.FutureL4T), 0o644)
	writeFile(t, root, "/etc/jetbake/image.json", `{"schema_version": 1, "router": "text-embeddings-router", "version": "1.8.2",
		"release": "jetpack8.0", "jetpack": "8.0", "l4t": "40.1.0", "cuda": "14.0",
		"tags": ["ghcr.io/jetbake/text-embeddings-router:1.8.2-jetpack8.0"],
		"targets": [{"sm": "8.7", "path": "/usr/local/bin/router-87"}, {"sm": "12.5", "path": "/usr/local/bin/router-125"}]}`, 0o644)
	for _, sm := range []string{"87", "125"} {
		writeFile(t, root, "/usr/local/bin/router-"+sm, strings.Replace(routerScript, "%s", "sm_"+sm, 1), 0o755)
	}
	installLibcuda(t, root, "/usr/lib/aarch64-linux-gnu")
	env := baseEnv(root, "JETBAKE_CUDAPROBE="+buildBinaries(t).probe, "FAKE_CUDA_MAJOR=12", "FAKE_CUDA_MINOR=5",
		"FAKE_CUDA_DRIVER_VERSION=14000", "JETBAKE_IMAGE_DIGEST="+testDigest)

	cfg := newConfig(nil, env)
	cfg.table = cctest.FutureTable()
	img, err := loadImageWith(cfg.root, cfg.table)
	require.NoError(t, err)
	h := detect(t.Context(), &cfg, wantDriver(&cfg, img))
	require.Equal(t, pathFast, h.Path)
	require.Equal(t, cctest.FutureSM(), h.GPU)
	d := decide(&cfg, img, h)
	require.Empty(t, d.Failure)
	require.Equal(t, "/usr/local/bin/router-125", d.Choice)
	require.Equal(t, "Jetson Future, SM 12.5", cfg.table.Describe(h.GPU))

	pc := newConfig([]string{"--probe", "--smoke"}, env)
	pc.table = cctest.FutureTable()
	var stdout, stderr bytes.Buffer
	code := probeMain(t.Context(), &pc, &stdout, &stderr, probeSetup{now: probeTime(), arch: "arm64"})
	require.Equal(t, 0, code, stderr.String()+stdout.String())
	require.Contains(t, stdout.String(), `"device_class": "`+cctest.FutureModule+`"`)

	// The shipped table does not know soc_id 41: no fast path, no GPU.
	plain := newConfig(nil, env)
	h = detect(t.Context(), &plain, false)
	require.Equal(t, pathFull, h.Path)
}
