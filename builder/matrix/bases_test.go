package matrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The matrix of issue 25, as a new user wrote it: JetPack 6.2 building on
// and running on the generic arm64 (SBSA) nvidia/cuda images, and JetPack
// 7.0 (CUDA 13.0) running on JetPack 6's l4t-cuda. Each base is refused by
// name, with its flavour, the release's and a base that fits.
func TestBasesOfTheWrongFlavour(t *testing.T) {
	doc := shippedTree(t)
	release(doc, 2)["build_base"] = "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"
	release(doc, 2)["runtime_base"] = "nvcr.io/nvidia/cuda:12.6.3-runtime-ubuntu22.04"
	release(doc, 3)["runtime_base"] = "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"
	data, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "matrix.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, err = Parse(data)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Len(t, verr.Errors, 3, "%v", err)

	want := []FieldError{
		{Path: "releases[2].build_base", Value: `"nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"`,
			Message: "is an SBSA CUDA image (nvcr.io/nvidia/cuda), but JetPack 6.2 needs Tegra CUDA: an SBSA CUDA build does not run on the Tegra GPU driver of JetPack 6 and earlier",
			Fix:     `use a Tegra base that fits, e.g. "nvcr.io/nvidia/l4t-jetpack:r36.4.0"`},
		{Path: "releases[2].runtime_base", Value: `"nvcr.io/nvidia/cuda:12.6.3-runtime-ubuntu22.04"`,
			Message: "is an SBSA CUDA image (nvcr.io/nvidia/cuda), but JetPack 6.2 needs Tegra CUDA: an SBSA CUDA build does not run on the Tegra GPU driver of JetPack 6 and earlier",
			Fix:     `use a Tegra base that fits, e.g. "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"`},
		{Path: "releases[3].runtime_base", Value: `"nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"`,
			Message: "is a Tegra CUDA image (nvcr.io/nvidia/l4t-cuda), but JetPack 7.0 needs SBSA CUDA: JetPack 7 and later run NVIDIA's arm64 server (SBSA) CUDA, and Tegra CUDA images belong to JetPack 6 and earlier",
			Fix:     `use an SBSA base that fits, e.g. "nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04"`},
	}
	for i, w := range want {
		got := verr.Errors[i]
		require.Positive(t, got.Line)
		got.Line, got.Column = 0, 0
		require.Equal(t, w, got)
	}

	// Load names the file, line and column, as `jetbake validate` prints it.
	_, err = Load(path)
	require.ErrorAs(t, err, &verr)
	lines := strings.Split(err.Error(), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	require.Regexp(t, `^`+regexp.QuoteMeta(path)+`:\d+:\d+: releases\[3\]\.runtime_base: "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime": is a Tegra CUDA image`, lines[2])
}

func TestBaseRules(t *testing.T) {
	for _, tc := range []ruleCase{
		{name: "an l4t-jetpack build base on JetPack 7", edit: func(d map[string]any) { release(d, 4)["build_base"] = "nvcr.io/nvidia/l4t-jetpack:r36.4.0" },
			path: "releases[4].build_base", message: "is a Tegra CUDA image (nvcr.io/nvidia/l4t-jetpack), but JetPack 7.2 needs SBSA CUDA"},
		{name: "Docker Hub's nvidia/cuda on JetPack 5", edit: func(d map[string]any) { release(d, 0)["runtime_base"] = "nvidia/cuda:11.4.3-runtime-ubuntu20.04" },
			path: "releases[0].runtime_base", message: "is an SBSA CUDA image (docker.io/nvidia/cuda), but JetPack 5.1.2 needs Tegra CUDA"},
		{name: "l4t-base on JetPack 7", edit: func(d map[string]any) { release(d, 3)["runtime_base"] = "nvcr.io/nvidia/l4t-base:r36.2.0" },
			path: "releases[3].runtime_base", message: "is a Tegra CUDA image (nvcr.io/nvidia/l4t-base)"},
		{name: "a runtime base of another CUDA by its tag", edit: func(d map[string]any) { release(d, 2)["runtime_base"] = "nvcr.io/nvidia/l4t-cuda:12.2.12-runtime" },
			path: "releases[2].runtime_base", message: `is CUDA 12.2 by its tag, but the release's cuda is "12.6"`},
		{name: "a build base of another L4T's CUDA", edit: func(d map[string]any) { release(d, 2)["build_base"] = "nvcr.io/nvidia/l4t-jetpack:r36.3.0" },
			path: "releases[2].build_base", message: `is CUDA 12.2 by its tag, but the release's cuda is "12.6"`},
		{name: "a CUDA 13.2 base for JetPack 7.0", edit: func(d map[string]any) { release(d, 3)["build_base"] = "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04" },
			path: "releases[3].build_base", message: `is CUDA 13.2 by its tag, but the release's cuda is "13.0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := shippedTree(t)
			tc.edit(doc)
			data, err := json.Marshal(doc)
			require.NoError(t, err)
			_, err = Parse(data)
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			found := find(verr.Errors, tc.path, tc.message)
			require.NotNil(t, found, "want %s: %s in:\n%v", tc.path, tc.message, err)
			require.Contains(t, found.Fix, "e.g. \"nvcr.io/nvidia/")
			require.Len(t, verr.Errors, 1, "%v", err)
		})
	}
	for i, b := range []string{
		"nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04@sha256:" + strings.Repeat("a", 64),
		"ghcr.io/acme/cuda-jetson:12.6-runtime", // not in the table: the build reads it
		"nvcr.io/nvidia/l4t-jetpack:latest",
	} {
		doc := shippedTree(t)
		if i == 0 {
			release(doc, 3)["build_base"] = b
		} else {
			release(doc, 2)["runtime_base"] = b
		}
		data, err := json.Marshal(doc)
		require.NoError(t, err)
		_, err = Parse(data)
		require.NoError(t, err, b)
	}
}
