package matrix

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/cctest"
)

func TestTagJetPack(t *testing.T) {
	for tag, want := range map[string]string{"jetpack7": "7", "1.8.0-jetpack6.2": "6.2", "JetPack6.": "6",
		"jetpack5.1.2-cu114": "5.1.2"} {
		got, ok := tagJetPack(tag)
		require.True(t, ok, tag)
		require.Equal(t, want, got, tag)
	}
	for _, tag := range []string{"latest", "1.8.0", "jetpack", "jetpack-7", "r36.4"} {
		_, ok := tagJetPack(tag)
		require.False(t, ok, tag)
	}
}

// Floating tags that strand a host the tag covers fail validation, naming
// the tag, the host and the fix; the shipped floating tag passes.
func TestFloatingTags(t *testing.T) {
	tests := []struct {
		name    string
		release int
		tags    []any
		path    string
		message string
		fix     string
	}{
		{name: "jetpack7 on the 7.2 image strands a JetPack 7.0 Thor", release: 4, tags: []any{"jetpack7"},
			path: "releases[4].tags[0]",
			message: `floating tag "jetpack7" points at the jetpack7.2 image, which refuses a Jetson Thor on JetPack 7.0 (L4T 38.2.0), ` +
				"a host the tag covers: the host has a driver for CUDA 13.0 on L4T R38.2.0 (JetPack 7.0) but the image needs a driver for CUDA 13.2 or a later 13.x",
			fix: `drop the tag: no release of the matrix runs on every JetPack 7 host; name the release instead, e.g. "jetpack7.2"`},
		{name: "jetpack7 on the 7.0 image has no binary for a 7.2 Orin", release: 3, tags: []any{"jetpack7"},
			path:    "releases[3].tags[0]",
			message: "refuses a Jetson Orin on JetPack 7.2 (L4T 39.2.0), a host the tag covers: the image has no binary for Jetson Orin, SM 8.7"},
		{name: "jetpack6 on the 6.2 image strands a JetPack 6.0 Orin", release: 2, tags: []any{"jetpack6"},
			path: "releases[2].tags[0]",
			message: `floating tag "jetpack6" points at the jetpack6.2 image, which refuses a Jetson Orin on JetPack 6.0 (L4T 36.3.0), ` +
				"a host the tag covers: the host has L4T R36.3.0 (JetPack 6.0) but the image needs L4T R36.4 or a later R36 release"},
		{name: "jetpack6.2.1 on the 6.1 image: a 6.2.1 host runs it, no error", release: 1, tags: []any{"jetpack6.2.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := shippedTree(t)
			release(doc, tt.release)["tags"] = tt.tags
			data, err := json.Marshal(doc)
			require.NoError(t, err)
			_, err = Parse(data)
			if tt.path == "" {
				require.NoError(t, err)
				return
			}
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			fe := find(verr.Errors, tt.path, tt.message)
			require.NotNil(t, fe, "%v", verr)
			if tt.fix != "" {
				require.Equal(t, tt.fix, fe.Fix)
			}
		})
	}
	// The shipped matrix's floating tag "jetpack5.1" covers JetPack 5.1 and
	// 5.1.2 hosts, Xavier and Orin, and its image runs on each.
	_, err := Parse(shipped(t))
	require.NoError(t, err)
}

// futureRelease is a release for the fictional future Jetson of cctest.
func futureRelease() map[string]any {
	return map[string]any{
		"name": "jetpack8.0", "jetpack": cctest.FutureJetPack, "l4t": cctest.FutureL4T, "cuda": "14.0", "ubuntu": "26.04",
		"build_base": "nvcr.io/nvidia/cuda:14.0.0-devel-ubuntu26.04", "runtime_base": "nvcr.io/nvidia/cuda:14.0.0-runtime-ubuntu26.04",
		"targets": []any{"12.5"}, "tier": "candidate", "hardware": []any{cctest.FutureModule}, "tags": []any{"jetpack8"},
	}
}

// FutureMatrix is the shipped matrix with a release for the future Jetson.
func futureMatrix(t *testing.T) []byte {
	t.Helper()
	doc := shippedTree(t)
	doc["releases"] = append(doc["releases"].([]any), futureRelease())
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	return data
}

// A future Jetson is rows of the table: validate accepts a release for it
// with the table that has them, and the shipped table does not.
func TestFutureJetsonValidates(t *testing.T) {
	data := futureMatrix(t)
	m, err := Parse(data, WithTable(cctest.FutureTable()))
	require.NoError(t, err)
	r, ok := m.Release("jetpack8.0")
	require.True(t, ok)
	require.Equal(t, []computecap.Capability{{Major: 12, Minor: 5}}, r.Targets)

	_, err = Parse(data)
	require.ErrorContains(t, err, `releases[5].jetpack: "8.0": unknown JetPack version`)
	require.Contains(t, targetsFix(cctest.FutureTable()), `"12.5" (Future)`)
	require.Equal(t, `write it like "7.2" (Xavier), "8.7" (Orin) or "11.0" (Thor)`, targetsFix(computecap.DefaultTable()))
}

func FuzzTagJetPack(f *testing.F) {
	for _, s := range []string{"jetpack7", "1.8.0-jetpack6.2", "jetpack..", "JETPACK5.1.2x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		v, ok := tagJetPack(tag)
		if !ok {
			return
		}
		require.NotEmpty(t, v)
		require.NotEqual(t, '.', rune(v[0]))
		require.NotEqual(t, '.', rune(v[len(v)-1]))
	})
}
