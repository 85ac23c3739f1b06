package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// An app's image: the same host rules as a router's, then its command
// with the user's arguments.
func TestRunApp(t *testing.T) {
	for _, tt := range []struct {
		host, image string
		env         []string
		path        string
		argv        []string
	}{
		{"orin-nano-jp6", "app-jetpack6.2", nil, "/opt/venv/bin/obliteratus",
			[]string{"/opt/venv/bin/obliteratus", "abliterate", "--model", "m"}},
		{"thor-jp7", "app-jetpack7.0", nil, "/opt/venv/bin/python3",
			[]string{"/opt/venv/bin/python3", "-m", "obliteratus.cli", "abliterate", "--model", "m"}},
	} {
		root := eptest.NewSysroot(t, tt.host, tt.image)
		r := runIn(t, root, []string{"abliterate", "--model", "m"}, tt.env...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Empty(t, r.stderr)
		require.NotNil(t, r.exec)
		require.Equal(t, filepath.Join(root, tt.path), r.exec.path)
		require.Equal(t, tt.argv, r.exec.argv)
	}
}

// A wrong host gets the routers' sentences.
func TestRunAppFailures(t *testing.T) {
	for _, tt := range []struct{ name, host, image, want string }{
		{"JetPack 7.0 app on a JetPack 6 Orin", "orin-nano-jp6", "app-jetpack7.0",
			"this image is for JetPack 7.0 (L4T R38.2.0, CUDA 13.0) and needs a driver for CUDA 13.0 or a later 13.x, " +
				"but the host has a driver for CUDA 12.6 on L4T R36.4.3 (JetPack 6.2): use ghcr.io/acme/obliteratus:0.1.0-jetpack6.2 instead" +
				upgrade72 + skipAdvice},
		{"JetPack 6.2 app on Thor", "thor-jp7", "app-jetpack6.2",
			"this image is for JetPack 6.2 (L4T R36.4.3, CUDA 12.9) and needs L4T R36.4 or a later R36 release, " +
				"but the host has L4T R38.2.0 (JetPack 7.0): use ghcr.io/acme/obliteratus:0.1.0-jetpack7.0 instead" + skipAdvice},
		{"JetPack 6.2 app without the runtime", "no-runtime", "app-jetpack6.2",
			"no NVIDIA GPU is visible in this container: it was probably started without --runtime nvidia"},
		{"JetPack 6.2 app on a desktop GPU", "desktop-rtx3090", "app-jetpack6.2",
			"this image has no obliteratus binary for the GPU found, GPU with SM 8.6 (from nvidia-smi); it holds sm_87 (/opt/venv/bin/obliteratus)."},
	} {
		root := eptest.NewSysroot(t, tt.host, tt.image)
		r := runIn(t, root, []string{"--help"})
		require.Equal(t, 1, r.code, tt.name)
		require.Nil(t, r.exec, tt.name)
		require.Contains(t, r.stderr, "jetbake-entrypoint: "+tt.want, tt.name)
	}
}

// --explain names the command it would exec.
func TestExplainApp(t *testing.T) {
	root := eptest.NewSysroot(t, "thor-jp7", "app-jetpack7.0")
	r := runIn(t, root, []string{"--explain", "--help"})
	require.Equal(t, 0, r.code, r.stderr)
	require.Nil(t, r.exec)
	var e explanation
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &e))
	require.Equal(t, "app", e.Image.Kind)
	require.Equal(t, "/opt/venv/bin/python3", e.Choice)
	require.Equal(t, []string{"/opt/venv/bin/python3", "-m", "obliteratus.cli", "--help"}, e.Exec)
}
