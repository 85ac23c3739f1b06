package bakekeys

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each built target gets bake's keys under its name; one not built, or
// whose name is one of the report's own keys, gets none.
func TestMarshal(t *testing.T) {
	report := map[string]any{"revision": "abc"}
	data, err := Marshal(report, []Target{
		{Name: "jetpack6.2", Digest: "sha256:aa", Tags: []string{"r.example/x:1"}, Node: "orin-1"},
		{Name: "jetpack7.2", Digest: "sha256:bb", Repository: "r.example/x"},
		{Name: "jetpack7.0"},
		{Name: "revision", Digest: "sha256:cc"},
	})
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Equal(t, "abc", doc["revision"])
	require.Equal(t, map[string]any{"containerimage.digest": "sha256:aa", "image.name": "r.example/x:1", "jetbake.node": "orin-1",
		"containerimage.descriptor": map[string]any{"mediaType": "application/vnd.oci.image.index.v1+json", "digest": "sha256:aa"}}, doc["jetpack6.2"])
	require.Equal(t, "r.example/x@sha256:bb", doc["jetpack7.2"].(map[string]any)["image.name"], "untagged: by digest")
	require.NotContains(t, doc, "jetpack7.0", "nothing built")
}
