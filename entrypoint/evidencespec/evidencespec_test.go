package evidencespec

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenRoundTrip decodes the entrypoint's golden evidence strictly and
// writes it again: the types name every field the probe writes, in its order.
func TestGoldenRoundTrip(t *testing.T) {
	want, err := os.ReadFile("../testdata/probe/orin-nano-jp6-pass.json")
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(want))
	dec.DisallowUnknownFields()
	var ev Evidence
	require.NoError(t, dec.Decode(&ev))
	require.Equal(t, SchemaVersion, ev.SchemaVersion)
	require.Equal(t, DigestFromEnv, ev.Image.DigestSource)
	for _, c := range ev.Result.Checks {
		require.Equal(t, Passed, c.Status, c.Name)
	}
	got, err := json.MarshalIndent(&ev, "", "  ")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got)+"\n")
}

// TestEmptyFields shows which fields the document always carries and which
// it leaves out when empty.
func TestEmptyFields(t *testing.T) {
	got, err := json.Marshal(&Evidence{Image: ProbedImage{Tags: []string{}}, Result: Result{Checks: []Check{{Name: "smoke", Status: Skipped}}}})
	require.NoError(t, err)
	require.JSONEq(t, `{"schema_version":0,"generated_at":"","image":{"tags":[]},"host":{"architecture":""},
		"result":{"pass":false,"checks":[{"name":"smoke","status":"skipped","detail":""}]}}`, string(got))
}
