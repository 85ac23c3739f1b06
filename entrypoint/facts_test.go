package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// An image built for a JetPack release its entrypoint's table lacks (a
// fictional 7.3, L4T R39.3.0, CUDA 13.3, Orin and Thor) carries the
// declared row in image.json: the entrypoint decides with it, on the host
// views of Thor and Orin as JetPack 7 shows them, with nv_tegra_release
// saying R39 REVISION: 3.0.
func TestDeclaredJetPackRoutes(t *testing.T) {
	for _, tt := range []struct{ host, want string }{
		{"thor-jp7", "/usr/local/bin/router-110"},
		{"orin-nano-jp6", "/usr/local/bin/router-87"},
	} {
		t.Run(tt.host, func(t *testing.T) {
			root := eptest.NewSysroot(t, tt.host, "jetpack7.3-declared")
			eptest.WriteFile(t, root, host.TegraReleasePath, eptest.StandinRelease("39.3.0"), 0o644)
			r := runIn(t, root, []string{"--port", "80"})
			require.Equal(t, 0, r.code, r.stderr)
			require.Empty(t, r.stderr)
			require.Equal(t, filepath.Join(root, tt.want), r.exec.path)
			e := explainRun(t, root)
			require.Equal(t, "7.3", e.HostJetPack)
			require.Equal(t, "39.3.0", e.HostL4T)
		})
	}
}

// On a JetPack 7.2 host the same image is refused, naming the 7.2 image
// of its family and the declared release to upgrade to.
func TestDeclaredJetPackRefusesOlderHost(t *testing.T) {
	root := eptest.NewSysroot(t, "thor-jp7", "jetpack7.3-declared")
	eptest.WriteFile(t, root, host.TegraReleasePath, eptest.StandinRelease("39.2.0"), 0o644)
	r := runIn(t, root, []string{"--port", "80"})
	require.Equal(t, 1, r.code)
	require.Nil(t, r.exec)
	require.Equal(t, "jetbake-entrypoint: this image is for JetPack 7.3 (L4T R39.3.0, CUDA 13.3) and needs a driver for CUDA 13.3 or a later 13.x, "+
		"but the host has a driver for CUDA 13.2 on L4T R39.2.0 (JetPack 7.2): use "+tagPrefix+"jetpack7.2 instead, "+
		"or upgrade the host to JetPack 7.3 (L4T 39.3.0) or later"+skipAdvice, r.stderr)
}

// Without the declared row (what an image.json of an entrypoint that
// ignored it would mean), the entrypoint's own table knows no R39.3 and
// takes R39's newest row, CUDA 13.2: the facts in the image decide.
func TestDeclaredJetPackNeedsTheImagesFacts(t *testing.T) {
	root := eptest.NewSysroot(t, "thor-jp7", "jetpack7.3-declared")
	eptest.WriteFile(t, root, host.TegraReleasePath, eptest.StandinRelease("39.3.0"), 0o644)
	p := filepath.Join(root, "etc/jetbake/image.json")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	data = regexp.MustCompile(`(?s),\s*"facts": \{.*\}\s*\}\s*$`).ReplaceAll(data, []byte("\n}\n"))
	require.NotContains(t, string(data), `"facts"`)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	r := runIn(t, root, []string{"--port", "80"})
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "but the host has a driver for CUDA 13.2 on L4T R39.3.0 (JetPack 7.2)")
}
