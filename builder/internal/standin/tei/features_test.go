package tei

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const teiSource = "../../../../testdata/tei-source"

func routerManifest(t *testing.T) *Manifest {
	t.Helper()
	m, err := ReadManifest(filepath.Join(teiSource, "router", "Cargo.toml"))
	require.NoError(t, err)
	return m
}

// The router's features resolve as cargo resolves TEI's: the defaults, -F
// lists, --no-default-features, implied features and cudarc's linking.
func TestResolveRouterFeatures(t *testing.T) {
	m := routerManifest(t)
	tests := []struct {
		name     string
		req      FeatureRequest
		features []string
		cudarc   bool
		linking  []string
	}{
		{name: "TEI's Dockerfile-cuda", req: FeatureRequest{Features: []string{"candle-cuda", "static-linking", "http"}, NoDefault: true},
			features: []string{"candle", "candle-cuda", "http", "static-linking"}, cudarc: true, linking: []string{"static-linking"}},
		{name: "the linking feature left out (TEI #709)", req: FeatureRequest{Features: []string{"candle-cuda", "http"}, NoDefault: true},
			features: []string{"candle", "candle-cuda", "http"}, cudarc: true},
		{name: "TEI's Dockerfile-cuda-all: the defaults", req: FeatureRequest{Features: []string{"candle-cuda"}},
			features: []string{"candle", "candle-cuda", "default", "dynamic-linking", "http"}, cudarc: true, linking: []string{"dynamic-linking"}},
		{name: "Xavier", req: FeatureRequest{Features: SplitFeatures("candle-cuda-volta, static-linking http"), NoDefault: true},
			features: []string{"candle", "candle-cuda-volta", "http", "static-linking"}, cudarc: true, linking: []string{"static-linking"}},
		{name: "no CUDA backend: cudarc is not built, its weak features are dropped", req: FeatureRequest{Features: []string{"http", "static-linking"}, NoDefault: true},
			features: []string{"http", "static-linking"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Resolve(m, tt.req)
			require.NoError(t, err)
			require.Equal(t, tt.features, res.Features)
			require.Equal(t, tt.cudarc, res.DepEnabled(m, "cudarc"))
			require.Equal(t, tt.linking, res.DepFeatures["cudarc"])
		})
	}
	res, err := Resolve(m, FeatureRequest{Features: []string{"candle-cuda"}, NoDefault: true})
	require.NoError(t, err)
	require.True(t, res.HasDepFeature("text-embeddings-backend", "flash-attn"))
	require.True(t, res.DepEnabled(m, "text-embeddings-backend"), "a dependency that is not optional")

	_, err = Resolve(m, FeatureRequest{Features: []string{"candle-cuda", "nope", "gone", "nope"}})
	require.EqualError(t, err, "none of the selected packages contains these features: nope, gone")
	_, err = Resolve(m, FeatureRequest{Features: []string{"nope"}})
	require.EqualError(t, err, "none of the selected packages contains this feature: nope")
}

func TestManifest(t *testing.T) {
	m := routerManifest(t)
	ws, err := ReadManifest(filepath.Join(teiSource, "Cargo.toml"))
	require.NoError(t, err)
	require.Equal(t, "text-embeddings-router", m.Package.Name)
	require.Equal(t, "1.9.3", m.VersionIn(ws))
	require.True(t, m.HasBin("text-embeddings-router"))
	require.False(t, m.HasBin("router"))
	require.Equal(t, []string{"text-embeddings-router"}, m.BinNames())
	require.Contains(t, m.OptionalDeps(), "cudarc")

	_, err = ReadManifest(filepath.Join(t.TempDir(), "Cargo.toml"))
	require.ErrorContains(t, err, "failed to read")
}
