package matrix

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// appMatrixFile is an app's matrix: JetPack 6.2 on Orin, JetPack 7.0 on Thor.
const appMatrixFile = "testdata/app-matrix.json"

// appMatrix returns its bytes.
func appMatrix(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(appMatrixFile)
	require.NoError(t, err)
	return data
}

// appDoc returns appMatrix decoded, for a test to change.
func appDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(appMatrix(t), &doc))
	return doc
}

// parseDoc encodes doc and parses it.
func parseDoc(t *testing.T, doc map[string]any) (*Matrix, error) {
	t.Helper()
	data, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	return Parse(data)
}

// onlyError parses doc and returns its one error.
func onlyError(t *testing.T, doc map[string]any) FieldError {
	t.Helper()
	_, err := parseDoc(t, doc)
	var verr *ValidationError
	require.True(t, errors.As(err, &verr), "%v", err)
	require.Len(t, verr.Errors, 1, "%v", err)
	require.NotZero(t, verr.Errors[0].Line)
	return verr.Errors[0]
}

func TestParseAppMatrix(t *testing.T) {
	m, err := Parse(appMatrix(t))
	require.NoError(t, err)
	require.Equal(t, KindApp, m.Kind())
	require.Equal(t, "0.1.0", m.Version())
	require.Equal(t, "nvcr.io/nvidia/pytorch:25.06-py3-igpu", m.Releases[0].Base)
	require.Equal(t, "app obliteratus, 2 releases, 2 SM targets, 2 tags", m.Summary())
	tags, err := m.Tags(1)
	require.NoError(t, err)
	require.Equal(t, []string{"0.1.0-jetpack7.0"}, tags)
	shippedM, err := Parse(shipped(t))
	require.NoError(t, err)
	require.Equal(t, KindRouter, shippedM.Kind())
	require.Nil(t, shippedM.App)
}

// A container of another JetPack line is refused in one sentence naming
// the base and the container of the release's line.
func TestAppBaseOfWrongLine(t *testing.T) {
	for _, tt := range []struct {
		release int
		base    string
		message string
		fix     string
	}{
		{0, "nvcr.io/nvidia/pytorch:25.08-py3",
			"is NVIDIA's unified SBSA PyTorch container for JetPack 7.0, not for JetPack 6.2, whose container is 25.06-py3-igpu: " +
				"an SBSA CUDA build does not run on the Tegra GPU driver of JetPack 6 and earlier",
			`set base to "nvcr.io/nvidia/pytorch:25.06-py3-igpu"`},
		{1, "nvcr.io/nvidia/pytorch:25.06-py3-igpu",
			"is NVIDIA's Tegra (-igpu) PyTorch container for JetPack 6.2, not for JetPack 7.0, whose container is 25.11-py3: " +
				"the -igpu containers are built on Tegra CUDA for Orin, and JetPack 7.0 runs NVIDIA's arm64 server (SBSA) CUDA",
			`set base to "nvcr.io/nvidia/pytorch:25.11-py3"`},
		{0, "127.0.0.1:5000/nvidia/pytorch:25.01-py3-igpu@sha256:" + sixtyFourA,
			"is NVIDIA's Tegra (-igpu) PyTorch container for JetPack 6.1, not for JetPack 6.2, whose container is 25.06-py3-igpu: " +
				"each container is built against one JetPack line's CUDA and libraries",
			`set base to "127.0.0.1:5000/nvidia/pytorch:25.06-py3-igpu"`},
	} {
		doc := appDoc(t)
		release(doc, tt.release)["base"] = tt.base
		fe := onlyError(t, doc)
		require.Equal(t, indexPath("releases", tt.release)+".base", fe.Path)
		require.Equal(t, quote(tt.base), fe.Value)
		require.Equal(t, tt.message, fe.Message)
		require.Equal(t, tt.fix, fe.Fix)
	}
}

// An -igpu container on a JetPack 7.2 release that targets Thor is
// refused in the same sentence shape; on an Orin-only 7.2 release it passes.
func TestAppIGPUBaseOnThor(t *testing.T) {
	doc := appDoc(t)
	rel := release(doc, 1)
	rel["name"], rel["jetpack"], rel["l4t"], rel["base"] = "jetpack7.2", "7.2", "39.2.0", "nvcr.io/nvidia/pytorch:26.02-py3-igpu"
	rel["cuda"] = "13.2"
	fe := onlyError(t, doc)
	require.Equal(t, "releases[1].base", fe.Path)
	require.Equal(t, "is NVIDIA's Tegra (-igpu) PyTorch container for JetPack 7.2, not for Jetson Thor, SM 11.0, a target of this release: "+
		"the -igpu containers are built on Tegra CUDA for Orin, and Jetson Thor runs NVIDIA's arm64 server (SBSA) CUDA", fe.Message)
	require.Equal(t, "remove 11.0 from targets and build it in a release on NVIDIA's unified SBSA container (nvcr.io/nvidia/pytorch:26.03-py3)", fe.Fix)

	rel["targets"], rel["hardware"] = []any{"8.7"}, []any{"Jetson Orin NX"}
	_, err := parseDoc(t, doc)
	require.NoError(t, err, "Orin on 7.2 runs the -igpu container")
}

// sixtyFourA is a digest's hex part.
const sixtyFourA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// A tag the table has no row for is refused, saying so rather than guess.
func TestAppBaseWithoutRow(t *testing.T) {
	doc := appDoc(t)
	release(doc, 1)["base"] = "nvcr.io/nvidia/pytorch:26.06-py3"
	fe := onlyError(t, doc)
	require.Equal(t, "releases[1].base", fe.Path)
	require.Equal(t, `jetbake's table of NVIDIA's PyTorch containers has no row for tag "26.06-py3", so it cannot tell which JetPack line the container is built for; JetPack 7.0's newest in the table is 25.11-py3`, fe.Message)
	require.Contains(t, fe.Fix, `set base to "nvcr.io/nvidia/pytorch:25.11-py3", or add the tag's row to frameworkRows in computecap/facts.go`)

	// JetPack 5's l4t-pytorch: the row's tag passes on a JetPack 5.1
	// release; another r35 tag is refused naming the newest known
	// container of the line, in its own repository.
	doc = appDoc(t)
	rel := release(doc, 0)
	rel["name"], rel["jetpack"], rel["l4t"], rel["cuda"], rel["base"] = "jetpack5.1", "5.1.2", "35.4.1", "11.4", "nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3"
	rel["targets"], rel["hardware"] = []any{"8.7"}, []any{"Jetson Orin NX"}
	_, err := parseDoc(t, doc)
	require.NoError(t, err)
	rel["base"] = "nvcr.io/nvidia/l4t-pytorch:r35.4.1-pth2.1-py3"
	fe = onlyError(t, doc)
	require.Equal(t, "releases[0].base", fe.Path)
	require.Equal(t, `jetbake's table of NVIDIA's PyTorch containers has no row for tag "r35.4.1-pth2.1-py3", so it cannot tell which JetPack line the container is built for; JetPack 5.1.2's newest in the table is nvcr.io/nvidia/pytorch:23.06-py3-igpu`, fe.Message)
	require.Contains(t, fe.Fix, `set base to "nvcr.io/nvidia/pytorch:23.06-py3-igpu"`)

	// A base in another repository is read by the build, not judged here.
	doc = appDoc(t)
	release(doc, 0)["base"] = "ghcr.io/acme/pytorch:custom"
	_, err = parseDoc(t, doc)
	require.NoError(t, err)
}

func TestAppReleaseRules(t *testing.T) {
	for _, tt := range []struct {
		name          string
		change        func(doc map[string]any)
		path, message string
	}{
		{"cuda of another container", func(doc map[string]any) { release(doc, 0)["cuda"] = "12.6" },
			"releases[0].cuda", "is not the CUDA of the release's base 25.06-py3-igpu, which holds CUDA 12.9"},
		{"a router's base", func(doc map[string]any) { release(doc, 0)["build_base"] = "nvcr.io/nvidia/l4t-jetpack:r36.4.0" },
			"releases[0].build_base", "is for routers: an app release builds on one framework container, its base"},
		{"a GPU of another line", func(doc map[string]any) { release(doc, 0)["targets"] = []any{"11.0"} },
			"releases[0].targets[0]", "no JetPack 6.2 module has SM 11.0: JetPack 6.2 runs on Jetson Orin (SM 8.7) only"},
		{"a build arg jetbake sets", func(doc map[string]any) { section(doc, "app")["build_args"] = map[string]any{"BASE": "x"} },
			"app.build_args.BASE", "is set by jetbake from the release"},
		{"a relative command", func(doc map[string]any) { section(doc, "app")["command"] = []any{"obliteratus"} },
			"app.command[0]", ""},
		{"no base", func(doc map[string]any) { delete(release(doc, 1), "base") },
			"releases[1].base", "missing required field"},
		{"both kinds", func(doc map[string]any) { doc["router"] = section(shippedTree(t), "router") },
			"app", "a matrix builds either a router or an app, not both"},
		{"neither kind", func(doc map[string]any) { delete(doc, "app") },
			"router", "missing required field: a matrix builds a router or an app"},
	} {
		doc := appDoc(t)
		tt.change(doc)
		fe := onlyError(t, doc)
		require.Equal(t, tt.path, fe.Path, tt.name)
		if tt.message != "" {
			require.Equal(t, tt.message, fe.Message, tt.name)
		}
		require.NotEmpty(t, fe.Fix, tt.name)
	}
}

// A router release with an app's base is refused.
func TestRouterReleaseWithBase(t *testing.T) {
	doc := shippedTree(t)
	release(doc, 2)["base"] = "nvcr.io/nvidia/pytorch:25.06-py3-igpu"
	fe := onlyError(t, doc)
	require.Equal(t, "releases[2].base", fe.Path)
	require.Contains(t, fe.Message, "this matrix builds a router")
}

// app.target must be a stage that starts from ${BASE}.
func TestAppStage(t *testing.T) {
	for dockerfile, message := range map[string]string{
		"ARG BASE\nFROM ${BASE} AS app\n":                    "",
		"ARG BASE\nFROM ${BASE} AS deps\nFROM deps AS app\n": "",
		"FROM ubuntu:24.04 AS app\n":                         "does not start from ${BASE}: the image would not be built on the release's framework container",
		"ARG BASE\nFROM ${BASE} AS main\n":                   "is not a stage of",
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "matrix.json"), appMatrix(t), 0o644))
		_, err := Load(filepath.Join(dir, "matrix.json"))
		if message == "" {
			require.NoError(t, err, dockerfile)
			continue
		}
		require.ErrorContains(t, err, "app.target: \"app\": "+message, dockerfile)
	}
}
