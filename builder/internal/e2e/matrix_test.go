package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/cli"
)

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

func TestWriteDemoMatrix(t *testing.T) {
	root, err := FindRepoRoot()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "matrix.json")
	require.NoError(t, WriteDemoMatrix(root, "127.0.0.1:5000", out))

	shipped := readJSON(t, filepath.Join(root, "matrix.json"))
	got := readJSON(t, out)

	router := got["router"].(map[string]any)
	require.Equal(t, filepath.Join(root, TEISource), router["context"], "the TEI-shaped source for TEI's repository")
	require.Equal(t, filepath.Join(root, "dockerfiles", "Dockerfile-jetson"), router["dockerfile"], "the shipped Dockerfile")
	shippedRouter := shipped["router"].(map[string]any)
	for _, k := range []string{"name", "version", "target", "runtime_target", "output", "smoke", "target_build_args", "env", "cmd", "ports"} {
		require.Equal(t, shippedRouter[k], router[k], k)
	}
	wantArgs := shippedRouter["build_args"].(map[string]any)
	wantArgs["GIT_SHA"] = "06670157fb6c1523482219bdb2d1660277d38088"
	require.Equal(t, wantArgs, router["build_args"], "the shipped build args and the commit jetbake passes for the shipped pin")

	image := got["image"].(map[string]any)
	require.Equal(t, "127.0.0.1:5000/jetbake/text-embeddings-router", image["repository"])
	shippedImage := shipped["image"].(map[string]any)
	require.Equal(t, shippedImage["tags"], image["tags"])

	require.NotContains(t, got, "$schema")
	// The QEMU path's matrix: the shipped releases without their
	// cross_build_base; WriteRecipeMatrix keeps it, and is the shipped
	// releases exactly.
	var crossBases int
	for _, r := range shipped["releases"].([]any) {
		if _, ok := r.(map[string]any)["cross_build_base"]; ok {
			crossBases++
		}
	}
	require.Equal(t, 4, crossBases, "the shipped matrix names the recipe for JetPack 6.1, 6.2, 7.0 and 7.2")
	recipe := filepath.Join(t.TempDir(), "recipe.json")
	require.NoError(t, WriteRecipeMatrix(root, "127.0.0.1:5000", recipe))
	require.Equal(t, shipped["releases"], readJSON(t, recipe)["releases"], "the shipped releases, bases, cross bases and tags are built")
	withoutCrossBases(shipped)
	require.Equal(t, shipped["releases"], got["releases"], "the shipped releases, bases and tags are built")

	_, err = os.Stat(filepath.Join(root, TEISource, "router", "Cargo.toml"))
	require.NoError(t, err, "the TEI-shaped source is in the checkout")
}

func TestWriteDemoMatrixMutate(t *testing.T) {
	root, err := FindRepoRoot()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "matrix.json")
	var calls int
	require.NoError(t, WriteDemoMatrix(root, "localhost:5001", out,
		func(m map[string]any) { calls++; m["releases"] = m["releases"].([]any)[:1] },
		func(m map[string]any) { calls++; m["router"].(map[string]any)["version"] = "9.9.9" },
	))
	require.Equal(t, 2, calls)
	got := readJSON(t, out)
	require.Len(t, got["releases"], 1)
	require.Equal(t, "9.9.9", got["router"].(map[string]any)["version"])
	require.Equal(t, "localhost:5001/jetbake/text-embeddings-router", got["image"].(map[string]any)["repository"])
}

func TestWriteDemoMatrixErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "matrix.json")

	err := WriteDemoMatrix(t.TempDir(), "127.0.0.1:5000", out)
	require.ErrorIs(t, err, os.ErrNotExist)

	bad := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bad, "matrix.json"), []byte("{"), 0o644))
	err = WriteDemoMatrix(bad, "127.0.0.1:5000", out)
	require.Error(t, err)
	require.Contains(t, err.Error(), "matrix.json")

	noRouter := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(noRouter, "matrix.json"), []byte(`{"image": {}}`), 0o644))
	err = WriteDemoMatrix(noRouter, "127.0.0.1:5000", out)
	require.EqualError(t, err, "matrix.json: router or image is not an object")
}

// The demo matrix is a valid matrix that plans every shipped release.
func TestLoadPlanDemoMatrix(t *testing.T) {
	root, err := FindRepoRoot()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "matrix.json")
	require.NoError(t, WriteDemoMatrix(root, "127.0.0.1:5000", out))
	p, err := LoadPlan(out, AllowStandin(root))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:5000/jetbake/text-embeddings-router", p.Repository)
	require.Equal(t, filepath.Join(root, TEISource), p.Router.Context)

	shipped := readJSON(t, filepath.Join(root, "matrix.json"))
	var names []string
	for _, r := range shipped["releases"].([]any) {
		names = append(names, r.(map[string]any)["name"].(string))
	}
	var planned []string
	for _, r := range p.Releases {
		planned = append(planned, r.Name)
	}
	require.Equal(t, names, planned)

	_, err = LoadPlan(filepath.Join(t.TempDir(), "missing.json"))
	require.Error(t, err)
}

// TestDemoMatrixNeedsTheGrant loads the demo matrix, which lies in a
// temporary folder and names the checkout's stand-in router, as a user's
// pipeline would: without --allow fs.read it is refused, naming the fix;
// with it, it validates. Both through the package API and the CLI.
func TestDemoMatrixNeedsTheGrant(t *testing.T) {
	root, err := FindRepoRoot()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "matrix.json")
	require.NoError(t, WriteDemoMatrix(root, "127.0.0.1:5000", out))
	routerDir := filepath.Join(root, TEISource)

	_, err = LoadPlan(out)
	require.ErrorContains(t, err, "router.context: \""+routerDir+"\": local context folder "+routerDir+
		" is outside the matrix's repository "+filepath.Dir(out))
	require.ErrorContains(t, err, "grant read access to "+routerDir+" with WithAllowRead")

	var stdout, stderr bytes.Buffer
	code := cli.Run(t.Context(), []string{"validate", "-f", out}, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "is outside the matrix's repository")
	require.Contains(t, stderr.String(), "router.dockerfile: ")
	require.Contains(t, stderr.String(), "grant read access with --allow fs.read="+routerDir+" (as 'docker buildx bake --allow')", "the CLI names its flag")

	stdout.Reset()
	stderr.Reset()
	code = cli.Run(t.Context(), append([]string{"validate", "-f", out}, AllowStandinFlags(root)...), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), ": ok")

	code = cli.Run(t.Context(), []string{"validate", "-f", out, "--allow", "network.host"}, &stdout, &stderr)
	require.Equal(t, 2, code)
	require.Contains(t, stderr.String(), `--allow "network.host": jetbake grants only file system reads`)
}

func TestFindRepoRoot(t *testing.T) {
	root, err := FindRepoRoot()
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "builder", "internal", "e2e"), mustGetwd(t))

	t.Chdir(t.TempDir())
	_, err = FindRepoRoot()
	require.Error(t, err)
	require.Contains(t, err.Error(), "no go.mod")
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return wd
}

// Each edit the tests build applies to the shipped Dockerfile exactly once,
// and a Dockerfile that moved on fails loudly.
func TestWriteDockerfile(t *testing.T) {
	root, err := FindRepoRoot()
	require.NoError(t, err)
	dir := t.TempDir()
	for _, edit := range []DockerfileEdit{withoutComputeCap, withCargoConfig, withoutLinkingFeature, withoutRuntimeSSL} {
		set, err := WriteDockerfile(root, dir, edit)
		require.NoError(t, err, edit.Name)
		m := map[string]any{"router": map[string]any{}}
		set(m)
		path := m["router"].(map[string]any)["dockerfile"].(string)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		if edit.New == "" {
			require.NotContains(t, string(data), edit.Old, edit.Name)
		} else {
			require.Contains(t, string(data), edit.New, edit.Name)
		}
	}
	_, err = WriteDockerfile(root, dir, DockerfileEdit{Name: "gone", Old: "RUN make\n"})
	require.ErrorContains(t, err, "is not in the shipped Dockerfile exactly once")
}
