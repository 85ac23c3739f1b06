package matrix

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
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
		{name: "cross forced without a cross base", edit: func(d map[string]any) { release(d, 2)["build_path"] = "cross" },
			path: "releases[2].build_path", message: "forces the cross path, but the release has no cross_build_base", fix: "add cross_build_base"},
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
