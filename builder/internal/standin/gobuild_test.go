package standin

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A stand-in program's cache key covers the sources of every package of the
// module that its build compiles, for that build's tags: the stand-in router
// without the CUDA backend compiles nocuda.go, with it (tag cuda) cuda.go, and
// the computecap table, and a package that is no longer there fails the key.
func TestGoKeySources(t *testing.T) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "go is not on PATH")
	k := Kit{Source: root}
	names := func(prog goProgram) []string {
		files, err := k.moduleFiles(t.Context(), goBin, prog)
		require.NoError(t, err)
		var out []string
		for _, f := range files {
			require.FileExists(t, f[1])
			out = append(out, f[0])
		}
		return out
	}
	const mod = "github.com/jetbake/jetbake/"
	router := goProgram{Pkg: "./" + teiPackage + "/cmd/router", Name: "router", Cgo: true, Tags: []string{"netgo"}}
	withoutCUDA := names(router)
	require.Contains(t, withoutCUDA, mod+teiPackage+"/cmd/router/nocuda.go")
	require.NotContains(t, withoutCUDA, mod+teiPackage+"/cmd/router/cuda.go")

	router.Tags = append(router.Tags, "cuda")
	withCUDA := names(router)
	require.Contains(t, withCUDA, mod+teiPackage+"/cmd/router/cuda.go")
	require.NotContains(t, withCUDA, mod+teiPackage+"/cmd/router/nocuda.go")
	require.Contains(t, withCUDA, mod+teiPackage+"/serve.go")
	require.Contains(t, withCUDA, mod+"computecap/facts.go")
	for _, f := range withCUDA {
		require.NotContains(t, f, "_test.go")
	}

	key, err := k.goKey(t.Context(), goBin, router)
	require.NoError(t, err)
	require.Len(t, key, 20)

	_, err = k.goKey(t.Context(), goBin, goProgram{Pkg: "./" + teiPackage + "/cmd/no-such-command", Name: "x"})
	require.ErrorContains(t, err, "list the sources of ./"+teiPackage+"/cmd/no-such-command")
}
