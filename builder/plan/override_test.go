package plan

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// shippedPlan plans the shipped matrix.
func shippedPlan(t *testing.T) *Plan {
	t.Helper()
	p, err := New(shippedMatrix(t))
	require.NoError(t, err)
	return p
}

func TestMatchReleases(t *testing.T) {
	p := shippedPlan(t)
	names := func(pattern string) []string {
		rels, err := p.MatchReleases(pattern)
		require.NoError(t, err, pattern)
		var out []string
		for _, r := range rels {
			out = append(out, r.Name)
		}
		return out
	}
	require.Equal(t, []string{"jetpack6.2"}, names("jetpack6.2"))
	require.Equal(t, []string{"jetpack6.1", "jetpack6.2"}, names("jetpack6.*"))
	require.Equal(t, []string{"jetpack5.1", "jetpack6.1", "jetpack6.2", "jetpack7.0", "jetpack7.2"}, names("*"))
	require.Equal(t, []string{"jetpack7.0", "jetpack7.2"}, names("jetpack7.?"))

	_, err := p.MatchReleases("jetpack9*")
	require.EqualError(t, err, `no release matches "jetpack9*": the plan has jetpack5.1, jetpack6.1, jetpack6.2, jetpack7.0, jetpack7.2`)
	_, err = p.MatchReleases("[")
	require.ErrorContains(t, err, `release pattern "[" is not a pattern`)
}

func TestSetBuildArg(t *testing.T) {
	p := shippedPlan(t)
	r, _ := p.Release("jetpack7.2")
	require.NoError(t, r.SetBuildArg("RUSTFLAGS", "-C target-cpu=cortex-a78ae"))
	require.Equal(t, "-C target-cpu=cortex-a78ae", r.BuildArgs["RUSTFLAGS"])
	for _, tgt := range r.Targets {
		require.Equal(t, "-C target-cpu=cortex-a78ae", tgt.BuildArgs["RUSTFLAGS"], tgt.SM)
		require.Equal(t, "candle-cuda", tgt.BuildArgs["CARGO_FEATURES"], "the matrix's other args stay")
	}
	other, _ := p.Release("jetpack6.2")
	require.NotContains(t, other.BuildArgs, "RUSTFLAGS")

	// Over the matrix's per-target value.
	r, _ = p.Release("jetpack5.1")
	require.Equal(t, "candle-cuda-volta", r.Targets[0].BuildArgs["CARGO_FEATURES"])
	err := r.SetBuildArg("CARGO_FEATURES", "candle-cuda")
	require.EqualError(t, err, "release jetpack5.1, SM 7.2: cannot be compiled with cargo feature candle-cuda: "+
		"its flash-attention v2 kernels need sm_80 or newer; SM 7.2 needs candle-cuda-volta")
	require.Equal(t, "candle-cuda-volta", r.Targets[0].BuildArgs["CARGO_FEATURES"], "a refused arg changes nothing")
	require.NoError(t, r.SetBuildArg("CARGO_FEATURES", "candle-cuda-volta"))
	require.Equal(t, "candle-cuda-volta", r.Targets[1].BuildArgs["CARGO_FEATURES"])

	for _, name := range []string{"CUDA_COMPUTE_CAP", "CUDA_ARCH", "BUILD_BASE", "RUNTIME_BASE", "ROUTER_VERSION", "SOURCE_DATE_EPOCH"} {
		err := r.SetBuildArg(name, "x")
		require.ErrorContains(t, err, name+": jetbake sets it", name)
		require.ErrorContains(t, err, "instead", "the error names the fix")
		require.NotContains(t, err.Error(), "--", "the package names no command's flag")
		var re *ReservedBuildArgError
		require.ErrorAs(t, err, &re)
		require.Equal(t, name, re.Name)
	}
	require.Error(t, r.SetBuildArg("", "x"))
}

// A printed plan never shows a cache's credentials.
func TestCacheRedacted(t *testing.T) {
	c := Cache{Type: "s3", Attrs: map[string]string{"bucket": "b", "access_key_id": "AKIA", "secret_access_key": "hunter2", "session_token": "st"}}
	data, err := json.Marshal(c)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"s3","attrs":{"bucket":"b","access_key_id":"AKIA","secret_access_key":"(redacted)","session_token":"(redacted)"}}`, string(data))
	require.Equal(t, "type=s3,access_key_id=AKIA,bucket=b,secret_access_key=(redacted),session_token=(redacted)", c.String())
	require.Equal(t, "hunter2", c.Attrs["secret_access_key"], "the plan itself keeps the value for the build")
	gha := Cache{Type: "gha", Attrs: map[string]string{"token": "t", "ghtoken": "g", "scope": "main"}}
	require.Equal(t, "type=gha,ghtoken=(redacted),scope=main,token=(redacted)", gha.String())
}
