package evidence

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
)

// declaredMatrix is the shipped matrix with a supported JetPack 7.3 that
// its facts declare.
func declaredMatrix(t *testing.T) *matrix.Matrix {
	t.Helper()
	data, err := os.ReadFile("../../matrix.json")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	releases := doc["releases"].([]any)
	rel := map[string]any{}
	for k, v := range releases[len(releases)-1].(map[string]any) {
		rel[k] = v
	}
	rel["name"], rel["jetpack"], rel["l4t"], rel["cuda"], rel["tier"] = "jetpack7.3", "7.3", "39.3.0", "13.3", TierSupported
	rel["build_base"], rel["runtime_base"] = "nvcr.io/nvidia/cuda:13.3.0-devel-ubuntu24.04", "nvcr.io/nvidia/cuda:13.3.0-runtime-ubuntu24.04"
	delete(rel, "cross_build_base") // the table's cross recipe knows no CUDA 13.3 devel image: QEMU on amd64
	doc["releases"] = append(releases, rel)
	var facts any
	require.NoError(t, json.Unmarshal([]byte(`{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
		"flavour": "sbsa", "rule": "driver-cuda", "sms": ["8.7", "11.0"], "driver_dirs": [{"dir": "/opt/nvidia/l4t-gpu-libs/openrm"}]}]}`), &facts))
	doc["facts"] = facts
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	m, err := matrix.Parse(data)
	require.NoError(t, err)
	m.Dir = t.TempDir()
	return m
}

// support marks a release on declared facts beside its tier, and a
// supported claim without evidence from a real Jetson is refused.
func TestSupportDeclaredFacts(t *testing.T) {
	m := declaredMatrix(t)
	require.Len(t, m.Warnings, 1, "validate warns of supported on declared facts")
	table, err := Support(t.Context(), m)
	require.NoError(t, err)
	row := table.Releases[len(table.Releases)-1]
	require.Equal(t, matrix.FactsDeclared, row.Facts)
	require.Equal(t, "rests on declared facts (JetPack 7.3, in the matrix)", row.FactsNote)
	var text bytes.Buffer
	require.NoError(t, table.WriteText(&text))
	require.Contains(t, text.String(), "jetpack7.3  supported (declared facts)")
	require.Contains(t, text.String(), "    rests on declared facts (JetPack 7.3, in the matrix): supported needs evidence from a real Jetson\n")
	require.Empty(t, table.Releases[0].Facts)

	errs := CheckStrict(t.Context(), m, WithResolver(metadata(goldenDigest)))
	var found bool
	for _, fe := range errs {
		if fe.Path == "releases[5].tier" {
			found = true
			require.Contains(t, fe.Message, "the release rests on declared facts (JetPack 7.3, in the matrix), which only evidence from a real Jetson backs")
		}
	}
	require.True(t, found, "%+v", errs)
}
