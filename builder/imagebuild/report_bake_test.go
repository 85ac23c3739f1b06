package imagebuild

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The metadata file has bake's per-target keys beside jetbake's own, and
// still reads back as a Report.
func TestReportBakeKeys(t *testing.T) {
	r := &Report{Revision: "abc", Releases: []ReleaseReport{
		{Name: "jetpack6.2", Outcome: Succeeded, Digest: "sha256:aa", Repository: "r.example/x", Tags: []string{"r.example/x:1", "r.example/x:2"}, Node: "orin-1"},
		{Name: "jetpack7.2", Outcome: Untagged, Digest: "sha256:bb", Repository: "r.example/x"},
		{Name: "jetpack7.0", Outcome: Failed},
	}}
	data, err := r.MarshalWithBakeKeys()
	require.NoError(t, err)
	var doc map[string]map[string]any
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &raw))
	doc = map[string]map[string]any{}
	for _, k := range []string{"jetpack6.2", "jetpack7.2"} {
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw[k], &m))
		doc[k] = m
	}
	require.Equal(t, "sha256:aa", doc["jetpack6.2"]["containerimage.digest"])
	require.Equal(t, "r.example/x:1,r.example/x:2", doc["jetpack6.2"]["image.name"])
	require.Equal(t, "sha256:aa", doc["jetpack6.2"]["containerimage.descriptor"].(map[string]any)["digest"])
	require.Equal(t, "r.example/x@sha256:bb", doc["jetpack7.2"]["image.name"], "untagged: by digest")
	require.NotContains(t, raw, "jetpack7.0", "nothing built")
	var back Report
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, "abc", back.Revision)
	require.Len(t, back.Releases, 3)
}
