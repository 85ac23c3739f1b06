package imagepick

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// declaredPlan is the shipped matrix with a fictional JetPack 7.3 (L4T
// 39.3.0, CUDA 13.3, Orin and Thor) that its facts declare.
func declaredPlan(t *testing.T) *plan.Plan {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "matrix.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	releases := doc["releases"].([]any)
	rel := map[string]any{}
	for k, v := range releases[len(releases)-1].(map[string]any) {
		rel[k] = v
	}
	rel["name"], rel["jetpack"], rel["l4t"], rel["cuda"] = "jetpack7.3", "7.3", "39.3.0", "13.3"
	rel["build_base"], rel["runtime_base"] = "nvcr.io/nvidia/cuda:13.3.0-devel-ubuntu24.04", "nvcr.io/nvidia/cuda:13.3.0-runtime-ubuntu24.04"
	delete(rel, "cross_build_base") // the table's cross recipe knows no CUDA 13.3 devel image: QEMU on amd64
	doc["releases"] = append(releases, rel)
	var facts any
	require.NoError(t, json.Unmarshal([]byte(`{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
		"flavour": "sbsa", "rule": "driver-cuda", "sms": ["8.7", "11.0"],
		"driver_dirs": [{"dir": "/opt/nvidia/l4t-gpu-libs/nvgpu", "family": "Orin", "driver": {"name": "nvgpu", "nodes": [["/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"], ["/dev/nvmap"]]}}, {"dir": "/opt/nvidia/l4t-gpu-libs/openrm", "family": "Thor", "driver": {"name": "OpenRM", "nodes": [["/dev/nvidiactl"], ["/dev/nvidia0"]]}}]}]}`), &facts))
	doc["facts"] = facts
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	m, err := matrix.Parse(data)
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	return p
}

// pick takes the declared JetPack row from the image's annotations
// (io.jetbake.facts.jetpack): a 7.3 host gets the 7.3 image, a 7.2 host
// the 7.2 one, whatever jetbake's own table knows.
func TestPickDeclaredJetPack(t *testing.T) {
	p := declaredPlan(t)
	rel73, ok := p.Release("jetpack7.3")
	require.True(t, ok)
	require.Equal(t, matrix.FactsDeclared, rel73.Annotations[matrix.KeyFacts])
	require.Contains(t, rel73.Annotations[matrix.KeyFactsJetPack], `"l4t":"39.3.0"`)
	rel72, _ := p.Release("jetpack7.2")
	require.NotContains(t, rel72.Annotations, matrix.KeyFacts)

	reg := startRegistry(t, nil)
	repo := reg + "/jetbake/text-embeddings-router"
	for _, rel := range p.Releases {
		pushRelease(t, repo, rel, false, nil)
	}
	for _, h := range []hostLine{
		{name: "R39.3.0 Thor (JetPack 7.3, declared)", l4t: "39.3.0", socID: 38, want: "jetpack7.3"},
		{name: "R39.3.0 Orin (JetPack 7.3, declared)", l4t: "39.3.0", socID: 35, want: "jetpack7.3"},
		{name: "R39.2.0 Thor (JetPack 7.2)", l4t: "39.2.0", socID: 38, want: "jetpack7.2"},
	} {
		t.Run(h.name, func(t *testing.T) {
			res, err := Pick(t.Context(), repo, h.options(t)...)
			require.NoError(t, err)
			require.Equal(t, h.want, res.Best.Meta.Release, "%+v", res.Candidates)
			for _, c := range res.Candidates {
				if c.Meta.Release == "jetpack7.3" {
					require.Equal(t, matrix.FactsDeclared, c.Meta.Facts)
					require.Equal(t, h.want == "jetpack7.3", c.Verdict.OK, c.Verdict.Reason)
				}
			}
		})
	}
}
