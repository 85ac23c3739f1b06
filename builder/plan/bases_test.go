package plan

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/cctest"
)

// Every shipped base is in the table: the plan shows its flavour and CUDA,
// and each matches its release's.
func TestPlanBasesFromTheTable(t *testing.T) {
	p, err := New(shippedMatrix(t))
	require.NoError(t, err)
	for _, r := range p.Releases {
		require.NotEmpty(t, r.Flavour, r.Name)
		require.Len(t, r.Bases, 2)
		for i, b := range r.Bases {
			require.Equal(t, []string{"build", "runtime"}[i], b.Role)
			require.Equal(t, []string{r.BuildBase, r.RuntimeBase}[i], b.Ref)
			require.Equal(t, FromTable, b.From, b.Ref)
			require.Equal(t, string(r.Flavour), b.Flavour, "%s %s", r.Name, b.Ref)
			require.Equal(t, r.CUDA, b.CUDA, "%s %s", r.Name, b.Ref)
		}
	}
	jp62, _ := p.Release("jetpack6.2")
	require.Equal(t, computecap.FlavourTegra, jp62.Flavour)
	require.Equal(t, Base{Role: "build", Ref: "nvcr.io/nvidia/l4t-jetpack:r36.4.0", Flavour: "tegra", CUDA: "12.6", From: FromTable}, jp62.Bases[0])
	jp70, _ := p.Release("jetpack7.0")
	require.Equal(t, computecap.FlavourSBSA, jp70.Flavour)
	require.Equal(t, Base{Role: "runtime", Ref: "nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04", Flavour: "sbsa", CUDA: "13.0", From: FromTable}, jp70.Bases[1])

	data, err := json.Marshal(jp62)
	require.NoError(t, err)
	require.Contains(t, string(data), `"flavour":"tegra","bases":[{"role":"build","ref":"nvcr.io/nvidia/l4t-jetpack:r36.4.0","flavour":"tegra","cuda":"12.6","from":"table"}`)
}

// A base the table does not know is shown as unknown until the build reads it.
func TestPlanUnknownBase(t *testing.T) {
	doc := shippedDoc(t)
	rel := doc["releases"].([]any)[2].(map[string]any)
	rel["runtime_base"] = "ghcr.io/acme/jetson-cuda:12.6"
	rel["build_base"] = "nvcr.io/nvidia/l4t-base:r36.2.0"
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	m, err := matrix.Parse(data)
	require.NoError(t, err)
	p, err := New(m, WithReleases("jetpack6.2"))
	require.NoError(t, err)
	require.Equal(t, []Base{
		{Role: "build", Ref: "nvcr.io/nvidia/l4t-base:r36.2.0", Flavour: "tegra", CUDA: NoCUDA, From: FromTable},
		{Role: "runtime", Ref: "ghcr.io/acme/jetson-cuda:12.6", Flavour: UnknownUntilRead, CUDA: UnknownUntilRead, From: FromBuild},
	}, p.Releases[0].Bases)
}

// The release's flavour comes from the table the matrix was checked with.
func TestPlanFutureFlavour(t *testing.T) {
	doc := shippedDoc(t)
	doc["releases"] = append(doc["releases"].([]any), map[string]any{
		"name": "jetpack8.0", "jetpack": cctest.FutureJetPack, "l4t": cctest.FutureL4T, "cuda": "14.0", "ubuntu": "26.04",
		"build_base": "nvcr.io/nvidia/cuda:14.0.0-devel-ubuntu26.04", "runtime_base": "nvcr.io/nvidia/cuda:14.0.0-runtime-ubuntu26.04",
		"targets": []any{"12.5"}, "tier": "candidate", "hardware": []any{cctest.FutureModule},
	})
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	m, err := matrix.Parse(data, matrix.WithTable(cctest.FutureTable()))
	require.NoError(t, err)
	p, err := New(m, WithReleases("jetpack8.0"))
	require.NoError(t, err)
	require.Equal(t, computecap.FlavourSBSA, p.Releases[0].Flavour)
	require.Equal(t, "14.0", p.Releases[0].Bases[0].CUDA)
}

// shippedDoc is the shipped matrix as generic JSON values.
func shippedDoc(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../matrix.json")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	return doc
}
