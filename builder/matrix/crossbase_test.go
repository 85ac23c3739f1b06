package matrix

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/dockerfiles"
)

// crossBase is a cross build base that fits release i of the shipped matrix.
func crossBase(cuda, target string) map[string]any {
	return map[string]any{"image": "registry.example.com/tei-cross:cuda" + cuda, "platform": "linux/amd64", "cuda": cuda, "cuda_target": target}
}

// A cross build base is checked against the table's cross rows for the
// release's line: each field that does not fit is refused by name, with
// NVIDIA's cross package of the release in the fix.
func TestCrossBuildBaseRules(t *testing.T) {
	for _, tc := range []struct {
		name, path, message, fix string
		edit                     func(d map[string]any)
	}{
		{name: "an arm64 cross base", edit: func(d map[string]any) {
			b := crossBase("12.6", "aarch64-linux")
			b["platform"] = "linux/arm64"
			release(d, 2)["cross_build_base"] = b
		}, path: "releases[2].cross_build_base.platform", message: "is not linux/amd64", fix: `set platform to "linux/amd64"`},
		{name: "another CUDA", edit: func(d map[string]any) { release(d, 3)["cross_build_base"] = crossBase("12.9", "sbsa-linux") },
			path: "releases[3].cross_build_base.cuda", message: `is not the release's cuda "13.0"`, fix: "install cuda-cross-sbsa-13-0"},
		{name: "Tegra CUDA for JetPack 7", edit: func(d map[string]any) { release(d, 4)["cross_build_base"] = crossBase("13.2", "aarch64-linux") },
			path: "releases[4].cross_build_base.cuda_target", message: "is not the folder of JetPack 7.2's SBSA CUDA, targets/sbsa-linux",
			fix: `install cuda-cross-sbsa-13-2 (NVIDIA's cross package of the release) and set cuda_target to "sbsa-linux"`},
		{name: "SBSA CUDA for JetPack 6", edit: func(d map[string]any) { release(d, 1)["cross_build_base"] = crossBase("12.6", "sbsa-linux") },
			path: "releases[1].cross_build_base.cuda_target", message: "an SBSA CUDA build does not run on the Tegra GPU driver",
			fix: "install cuda-cross-aarch64-12-6"},
		{name: "cross forced without a cross base", edit: func(d map[string]any) { release(d, 0)["build_path"] = "cross" },
			path: "releases[0].build_path", message: "forces the cross path, but the release has no cross_build_base", fix: "add cross_build_base"},
		// The recipe (issue 48): JetPack 5 has none, and build_args may
		// not contradict the table's row of the release's line.
		{name: "a recipe for JetPack 5", edit: func(d map[string]any) { release(d, 0)["cross_build_base"] = recipe("11.4", "aarch64-linux", nil) },
			path: "releases[0].cross_build_base.recipe", message: "JetPack 5.1.2 has no cross build recipe: NVIDIA supports cross development for Jetson (arm64-Jetson) only on an Ubuntu 22.04 host",
			fix: "remove cross_build_base: the release builds under QEMU on an amd64 node"},
		{name: "image and recipe", edit: func(d map[string]any) {
			b := recipe("12.6", "aarch64-linux", nil)
			b["image"] = "registry.example.com/tei-cross:cuda12.6"
			release(d, 2)["cross_build_base"] = b
		}, path: "releases[2].cross_build_base.recipe", message: "is given beside image", fix: "keep image for a prebuilt base"},
		{name: "neither image nor recipe", edit: func(d map[string]any) {
			b := recipe("12.6", "aarch64-linux", nil)
			delete(b, "recipe")
			release(d, 2)["cross_build_base"] = b
		}, path: "releases[2].cross_build_base", message: "names no image and no recipe", fix: `add "recipe": "jetbake"`},
		{name: "another cross package", edit: func(d map[string]any) {
			release(d, 2)["cross_build_base"] = recipe("12.6", "aarch64-linux", map[string]any{"CUDA_CROSS_PACKAGE": "cuda-cross-sbsa-12-6"})
		}, path: "releases[2].cross_build_base.build_args.CUDA_CROSS_PACKAGE", message: `is not JetPack 6.2's "cuda-cross-aarch64-12-6"`,
			fix: `remove it: the table of facts gives "cuda-cross-aarch64-12-6"`},
		{name: "a devel image of another CUDA", edit: func(d map[string]any) {
			release(d, 3)["cross_build_base"] = recipe("13.0", "sbsa-linux", map[string]any{"CUDA_DEVEL_IMAGE": "mirror.example.com/nvidia/cuda:12.9.1-devel-ubuntu24.04"})
		}, path: "releases[3].cross_build_base.build_args.CUDA_DEVEL_IMAGE", message: "is not NVIDIA's CUDA 13.0 devel image for Ubuntu 24.04",
			fix: `remove it to use "nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04", or name a mirror's copy of it`},
		{name: "an argument the recipe lacks", edit: func(d map[string]any) {
			release(d, 2)["cross_build_base"] = recipe("12.6", "aarch64-linux", map[string]any{"UBUNTU_MIRROR": "http://mirror.example.com/ubuntu"})
		}, path: "releases[2].cross_build_base.build_args.UBUNTU_MIRROR", message: "is not an ARG of jetbake's Dockerfile-cross-base",
			fix: "use one of CROSS_GCC, CUDA_CROSS_PACKAGE, CUDA_CROSS_REPO, CUDA_DEVEL_IMAGE, CUDA_KEYRING, TARGET_ARCH, TARGET_TRIPLE, UBUNTU_ARCHIVE, UBUNTU_CODENAME, UBUNTU_KEYRING, UBUNTU_PORTS"},
		{name: "build args of a prebuilt image", edit: func(d map[string]any) {
			b := crossBase("12.6", "aarch64-linux")
			b["build_args"] = map[string]any{"CROSS_GCC": "11"}
			release(d, 2)["cross_build_base"] = b
		}, path: "releases[2].cross_build_base.build_args", message: "are for a recipe", fix: "remove build_args, or replace image with recipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := shippedTree(t)
			tc.edit(doc)
			errs := validationErrors(t, doc)
			require.Len(t, errs, 1, "%v", errs)
			require.Equal(t, tc.path, errs[0].Path)
			require.Contains(t, errs[0].Message, tc.message)
			require.Contains(t, errs[0].Fix, tc.fix)
		})
	}
	doc := shippedTree(t)
	for i, b := range []map[string]any{crossBase("11.4", "aarch64-linux"), crossBase("12.6", "aarch64-linux"),
		crossBase("12.6", "aarch64-linux"), crossBase("13.0", "sbsa-linux"), crossBase("13.2", "sbsa-linux")} {
		release(doc, i)["cross_build_base"] = b
	}
	release(doc, 2)["build_path"] = "qemu"
	release(doc, 3)["build_path"] = "cross"
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	m, err := Parse(data)
	require.NoError(t, err, "a fitting cross base for every release")
	require.Equal(t, "sbsa-linux", m.Releases[3].CrossBuildBase.CUDATarget)
	require.Equal(t, BuildPathQEMU, m.Releases[2].BuildPath)
}

// validationErrors parses doc and returns the errors it is refused with.
func validationErrors(t *testing.T, doc map[string]any) []FieldError {
	t.Helper()
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	_, err = Parse(data)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	return verr.Errors
}

// recipe is a cross_build_base naming jetbake's recipe, with build args.
func recipe(cuda, dir string, args map[string]any) map[string]any {
	b := map[string]any{"recipe": BuiltinRecipe, "platform": "linux/amd64", "cuda": cuda, "cuda_target": dir}
	if args != nil {
		b["build_args"] = args
	}
	return b
}

// A mirror's repositories and a mirror's copy of the devel image are build
// args the recipe takes; RecipeArgs puts them over the table's.
func TestRecipeArgsWithAMirror(t *testing.T) {
	doc := shippedTree(t)
	release(doc, 2)["cross_build_base"] = recipe("12.6", "aarch64-linux", map[string]any{
		"UBUNTU_ARCHIVE": "http://mirror.example.com/ubuntu", "CUDA_DEVEL_IMAGE": "mirror.example.com/nvidia/cuda:12.6.3-devel-ubuntu22.04"})
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	m, err := Parse(data)
	require.NoError(t, err)
	args, err := m.RecipeArgs(&m.Releases[2])
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"CUDA_DEVEL_IMAGE": "mirror.example.com/nvidia/cuda:12.6.3-devel-ubuntu22.04", "UBUNTU_CODENAME": "jammy",
		"CUDA_CROSS_REPO":    "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/cross-linux-aarch64",
		"CUDA_CROSS_PACKAGE": "cuda-cross-aarch64-12-6", "CROSS_GCC": "11", "UBUNTU_ARCHIVE": "http://mirror.example.com/ubuntu",
	}, args)
}

// The embedded recipe's defaults are the table's row for JetPack 6.2
// (CUDA 12.6 on Ubuntu 22.04), so that a build by hand with no arguments
// builds what jetbake builds for it.
func TestRecipeDefaultsAreTheTables(t *testing.T) {
	want, err := computecap.DefaultTable().RecipeArgs("6.2", computecap.CUDAVersion{Major: 12, Minor: 6})
	require.NoError(t, err)
	ast, err := parser.Parse(bytes.NewReader(dockerfiles.DockerfileCrossBase()))
	require.NoError(t, err)
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	require.NoError(t, err)
	got := map[string]string{}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			got[kv.Key] = *kv.Value
		}
	}
	for _, cmd := range stages[0].Commands {
		if a, ok := cmd.(*instructions.ArgCommand); ok {
			for _, kv := range a.Args {
				got[kv.Key] = *kv.Value
			}
		}
	}
	for k, v := range want {
		require.Equal(t, v, got[k], k)
	}
}
