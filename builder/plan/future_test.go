package plan

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap/cctest"
)

// A future Jetson is rows of the table: a matrix release for it plans a
// router binary for its SM, with no other code change.
func TestPlanFutureJetson(t *testing.T) {
	data, err := os.ReadFile("../../matrix.json")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["releases"] = append(doc["releases"].([]any), map[string]any{
		"name": "jetpack8.0", "jetpack": cctest.FutureJetPack, "l4t": cctest.FutureL4T, "cuda": "14.0", "ubuntu": "26.04",
		"build_base": "nvcr.io/nvidia/cuda:14.0.0-devel-ubuntu26.04", "runtime_base": "nvcr.io/nvidia/cuda:14.0.0-runtime-ubuntu26.04",
		"targets": []any{"12.5"}, "tier": "candidate", "hardware": []any{cctest.FutureModule},
	})
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	m, err := matrix.Parse(data, matrix.WithTable(cctest.FutureTable()))
	require.NoError(t, err)
	p, err := New(m, WithReleases("jetpack8.0"))
	require.NoError(t, err)
	r := p.Releases[0]
	require.Len(t, r.Targets, 1)
	require.Equal(t, "12.5", r.Targets[0].SM)
	require.Equal(t, "sm_125", r.Targets[0].Arch)
	require.Equal(t, "router-125", BinaryName(cctest.FutureSM()))
	require.Equal(t, "12.5", r.Annotations["io.jetbake.sm-targets"])
}
