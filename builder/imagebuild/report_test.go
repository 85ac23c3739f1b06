package imagebuild

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReportErr(t *testing.T) {
	tests := []struct {
		name     string
		releases []ReleaseReport
		wantErr  string
	}{
		{name: "all succeeded", releases: []ReleaseReport{
			{Name: "jetpack6.2", Outcome: Succeeded}, {Name: "jetpack7.2", Outcome: Succeeded},
		}},
		{name: "nothing selected"},
		{name: "one failed, one untagged", releases: []ReleaseReport{
			{Name: "jetpack6.2", Outcome: Failed, Error: "compile failed"},
			{Name: "jetpack7.2", Outcome: Untagged},
		}, wantErr: "1 of 2 releases failed:\n  jetpack6.2: compile failed\nnot tagged: jetpack7.2 (built-not-tagged)\nno tag was put on for this run"},
		{name: "failed and skipped", releases: []ReleaseReport{
			{Name: "a", Outcome: Failed, Error: "x"},
			{Name: "b", Outcome: Failed, Error: "y"},
			{Name: "c", Outcome: Skipped},
		}, wantErr: "2 of 3 releases failed:\n  a: x\n  b: y\nnot tagged: c (skipped)\nno tag was put on for this run"},
		{name: "untagged only", releases: []ReleaseReport{
			{Name: "a", Outcome: Succeeded},
			{Name: "b", Outcome: Untagged, Error: "put tag: denied"},
		}, wantErr: "0 of 2 releases failed\nnot tagged: b (built-not-tagged)\nno tag was put on for this run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Releases: tt.releases}
			err := r.Err()
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.False(t, r.Failed())
				return
			}
			require.EqualError(t, err, tt.wantErr)
			require.True(t, r.Failed())
		})
	}
}

func TestReportWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metadata.json")
	r := &Report{Revision: "abc", SourceDateEpoch: testEpoch, Releases: []ReleaseReport{{
		Name: "jetpack6.2", Outcome: Succeeded, Digest: "sha256:aa", Repository: testRepo,
		Tags:    []string{testRepo + ":jetpack6"},
		Bases:   []Base{{Role: "build", Ref: "b", Resolved: "b2", Digest: "sha256:bb"}},
		Targets: []string{"8.7"}, DurationSeconds: 1.5,
	}}}
	require.NoError(t, os.WriteFile(path, []byte("old content that is longer than nothing"), 0o644))
	require.NoError(t, r.WriteFile(path))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var got Report
	require.NoError(t, json.Unmarshal(data, &got))
	require.Equal(t, *r, got)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	rel := raw["releases"].([]any)[0].(map[string]any)
	require.Equal(t, []any{"8.7"}, rel["sm_targets"])
	require.Equal(t, "succeeded", rel["outcome"])
	require.NotContains(t, rel, "error")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")

	err = r.WriteFile(filepath.Join(dir, "missing", "metadata.json"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "write "+filepath.Join(dir, "missing", "metadata.json"))
}

func TestEpochTime(t *testing.T) {
	require.Equal(t, "2026-01-01T00:00:00Z", epochTime(testEpoch).Format("2006-01-02T15:04:05Z07:00"))
	require.Equal(t, "UTC", epochTime(0).Location().String())
}
