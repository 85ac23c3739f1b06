package tei

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Dockerfile-jetson's cargo line compiles the router's path dependencies
// its features enable, each package's build script first, then the router.
func TestUnitsOfTheRouterBuild(t *testing.T) {
	src := copySource(t)
	h := buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": "87", "GIT_SHA": "0667"})
	units, err := Units(src, args(t, "--release", "--bin", "text-embeddings-router", "-F", "candle-cuda", "-F", "static-linking", "-F", "http", "--no-default-features"), h)
	require.NoError(t, err)
	var got []string
	for _, u := range units {
		got = append(got, u.Package+" "+u.Kind)
	}
	require.Equal(t, []string{
		"text-embeddings-backend-candle custom-build", "text-embeddings-backend-candle lib",
		"text-embeddings-backend-core lib", "text-embeddings-backend lib", "text-embeddings-core lib",
		"text-embeddings-router custom-build", "text-embeddings-router bin",
	}, got)
	require.Equal(t, "87", units[1].Env["CUDA_COMPUTE_CAP"], "the candle build script hands it on")
	require.Contains(t, units[1].Features, "flash-attn")
	router := units[len(units)-1]
	require.Equal(t, "0667", router.Env["VERGEN_GIT_SHA"])
	deps := filepath.Join(src, "target", "release", "deps")
	a := router.RustcArgs(src, deps, true, units)
	require.Equal(t, []string{"--crate-name", "text_embeddings_router", "--edition=2021", "router/src/main.rs"}, a[:4])
	require.Contains(t, a, "text_embeddings_backend="+filepath.Join(deps, "libtext_embeddings_backend-"+units[3].Metadata()+".rlib"))

	cpu, err := Units(src, args(t, "--release", "--bin", "text-embeddings-router", "-F", "http", "--no-default-features"), h)
	require.NoError(t, err)
	require.Len(t, cpu, 5, "no candle backend: the backend and its core, the core library, the router's build script and binary")
}

// The stand-in rustc writes outputs that change with the crate's sources,
// its env-deps and its --extern files, and nothing else.
func TestCompileRustc(t *testing.T) {
	src := copySource(t)
	h := buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": "87"})
	units, err := Units(src, args(t, "--release", "--bin", "text-embeddings-router", "-F", "candle-cuda", "-F", "static-linking", "-F", "http", "--no-default-features"), h)
	require.NoError(t, err)
	deps := filepath.Join(src, "target", "release", "deps")
	outputs := func(env map[string]string) map[string]string {
		out := map[string]string{}
		for _, u := range units {
			r, err := ParseRustc(u.RustcArgs(src, deps, true, units))
			require.NoError(t, err)
			getenv := func(k string) (string, bool) {
				if v, ok := env[k]; ok {
					return v, true
				}
				v, ok := u.Env[k]
				return v, ok
			}
			_, err = CompileRustc(r, src, getenv)
			require.NoError(t, err)
			for _, name := range r.Outputs() {
				data, err := os.ReadFile(filepath.Join(deps, name))
				require.NoError(t, err)
				out[u.Crate+" "+u.Kind+" "+filepath.Ext(name)] = string(data)
			}
		}
		return out
	}
	before := outputs(nil)
	require.Contains(t, before["text_embeddings_backend_candle lib .d"], "# env-dep:CUDA_COMPUTE_CAP=87")
	require.Contains(t, before["text_embeddings_backend_candle lib .d"], filepath.Join(src, "backends", "candle", "src", "compute_cap.rs"))

	other := outputs(map[string]string{"CUDA_COMPUTE_CAP": "110"})
	require.NotEqual(t, before["text_embeddings_backend_candle lib .rlib"], other["text_embeddings_backend_candle lib .rlib"])
	require.NotEqual(t, before["text_embeddings_backend lib .rlib"], other["text_embeddings_backend lib .rlib"], "its --extern changed")
	require.Equal(t, before["text_embeddings_core lib .rlib"], other["text_embeddings_core lib .rlib"])

	require.NoError(t, os.WriteFile(filepath.Join(src, "router", "src", "main.rs"), []byte("// one line\nfn main() {}\n"), 0o644))
	changed := outputs(nil)
	for k, v := range before {
		if k == "text_embeddings_router bin " {
			require.NotEqual(t, v, changed[k], k)
			continue
		}
		require.Equal(t, v, changed[k], "%s does not read router/src/main.rs", k)
	}

	out, err := CompileRustc(Rustc{Input: "-", Prints: []string{"file-names"}, Types: []string{"bin", "rlib"}}, src, h.Env)
	require.NoError(t, err)
	require.Contains(t, out, "lib___.rlib")
	_, err = ParseRustc([]string{"a.rs", "b.rs"})
	require.ErrorContains(t, err, "multiple input filenames provided")
}
