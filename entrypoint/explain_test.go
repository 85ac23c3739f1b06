package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

func TestExplainOrinNano(t *testing.T) {
	root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6")
	r := runIn(t, root, []string{"--explain", "--port", "80"})
	require.Equal(t, 0, r.code, r.stderr)
	require.Nil(t, r.exec)
	e := explainRun(t, root)
	names, found := []string{}, []bool{}
	for _, s := range e.Sources {
		names, found = append(names, s.Name), append(found, s.Found)
	}
	// A Jetson soc_id takes the fast path: the SM from the table, the
	// driver's version only (here there is no libcuda), nothing else.
	require.Equal(t, []string{"JETBAKE_COMPUTE_CAP", "soc_id", "cuda-driver"}, names)
	require.Equal(t, []bool{false, true, false}, found)
	require.Equal(t, "/sys/devices/soc0/soc_id 35 is tegra234, Jetson Orin", e.Sources[1].Detail)
	require.Equal(t, "libcuda.so.1 not found", e.Sources[2].Detail)
	require.Equal(t, detect.PathFast, e.Path)
	require.Equal(t, "/sys/devices/soc0/soc_id names tegra234 (Jetson Orin): SM from the table, "+
		"driver CUDA version from cuDriverGetVersion without cuInit", e.PathWhy)
	require.Equal(t, "8.7", e.ComputeCap)
	require.Equal(t, "Jetson Orin, SM 8.7", e.GPU)
	require.Equal(t, "soc_id", e.DetectedBy)
	require.Equal(t, "36.4.3", e.HostL4T)
	require.Equal(t, "6.2", e.HostJetPack)
	require.Equal(t, orinNanoModel, e.Model)
	require.Equal(t, []detect.Candidate{{SM: "8.7", Path: "/usr/local/bin/router-87", Runs: true,
		Reason: "sm_87 code is built for this GPU's own SM 8.7"}}, e.Candidates)
	require.Equal(t, "/usr/local/bin/router-87", e.Choice)
	require.Empty(t, e.Failure)

	withFlag := runIn(t, root, []string{"--explain", "--port", "80"})
	withEnv := runIn(t, root, []string{"--port", "80"}, "JETBAKE_EXPLAIN=1")
	require.Equal(t, withFlag.stdout, withEnv.stdout)
	require.Contains(t, withEnv.stdout, "\"args\": [\n    \"--port\",\n    \"80\"\n  ]")
}

func TestExplainFailures(t *testing.T) {
	tests := []struct {
		name, host, image string
		wantFailure       string
		wantCandidates    []bool
		wantSources       int
	}{
		{name: "no runtime", host: "no-runtime", image: "jetpack6",
			wantFailure: "no NVIDIA GPU is visible in this container: it was probably started without --runtime nvidia", wantSources: 5},
		{name: "host rule refuses and still judges the binaries", host: "thor-jp7", image: "jetpack7.2",
			wantFailure: "this image is for JetPack 7.2 (L4T R39.2.0, CUDA 13.2) and needs a driver for CUDA 13.2 or a later 13.x, " +
				"but the host has a driver for CUDA 13.0 on L4T R38.2.0 (JetPack 7.0)", wantCandidates: []bool{false, true}, wantSources: 3},
		{name: "no image description", host: "thor-jp7",
			wantFailure: "/etc/jetbake/image.json is missing", wantSources: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, tt.host, tt.image)
			e := explainRun(t, root)
			require.Contains(t, e.Failure, tt.wantFailure)
			require.Empty(t, e.Choice)
			runs := []bool{}
			for _, c := range e.Candidates {
				runs = append(runs, c.Runs)
			}
			require.Equal(t, append([]bool{}, tt.wantCandidates...), runs)
			require.Len(t, e.Sources, tt.wantSources, "explain tries every source of the path taken")
			require.NotEmpty(t, e.HostFiles)
		})
	}
}

func TestExplainThorFastPath(t *testing.T) {
	root := eptest.NewSysroot(t, "thor-jp7", "jetpack7.2")
	e := explainRun(t, root, "JETBAKE_SKIP_L4T_CHECK=1")
	require.Equal(t, detect.PathFast, e.Path)
	require.Equal(t, "/sys/devices/soc0/soc_id 38 is tegra264, Jetson Thor", e.Sources[1].Detail)
	require.Equal(t, "11.0", e.ComputeCap)
	require.Equal(t, "Jetson Thor, SM 11.0", e.GPU)
	require.Equal(t, "NVIDIA Jetson AGX Thor Developer Kit", e.Model)
	require.Equal(t, "7.0", e.HostJetPack)
	require.Equal(t, "/usr/local/bin/router-110", e.Choice)
	nodes := sourceNamed(t, e.HostFiles, "GPU device nodes")
	require.Equal(t, "/dev/nvidiactl, /dev/nvidia0", nodes.Value)
}
