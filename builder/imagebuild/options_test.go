package imagebuild

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseOutput(t *testing.T) {
	tests := []struct {
		flag    string
		want    Output
		wantErr string
	}{
		{flag: "type=oci,dest=out", want: Output{Type: "oci", Dest: "out"}},
		{flag: "type=docker,dest=images/tei.tar", want: Output{Type: "docker", Dest: "images/tei.tar"}},
		{flag: "dest=/abs/dir,type=oci", want: Output{Type: "oci", Dest: "/abs/dir"}},
		{flag: "type=oci,dest=a=b", want: Output{Type: "oci", Dest: "a=b"}},
		{flag: "", wantErr: `unknown key ""`},
		{flag: "type=oci", wantErr: "dest is missing"},
		{flag: "type=oci,dest=", wantErr: "dest is missing"},
		{flag: "type=docker,dest=x.jetbake-partial", wantErr: "dest is missing"},
		{flag: "dest=out", wantErr: "type must be oci or docker"},
		{flag: "type=registry,dest=out", wantErr: "type must be oci or docker"},
		{flag: "type=local,dest=out", wantErr: "type must be oci or docker"},
		{flag: "type=OCI,dest=out", wantErr: "type must be oci or docker"},
		{flag: "type=oci,dest=out,tar=false", wantErr: `unknown key "tar"`},
		{flag: "type=oci,,dest=out", wantErr: `unknown key ""`},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			got, err := ParseOutput(tt.flag)
			if tt.wantErr != "" {
				var oe *OutputError
				require.ErrorAs(t, err, &oe)
				require.Equal(t, tt.flag, oe.Value)
				require.Contains(t, oe.Problem, tt.wantErr)
				require.Equal(t, strings.HasPrefix(tt.wantErr, "type must be"), oe.NotLocal)
				require.NotContains(t, err.Error(), "--")
				require.Equal(t, Output{}, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseOutput(f *testing.F) {
	for _, seed := range []string{"type=oci,dest=out", "type=docker,dest=a.tar", "", "type=x", "dest=,type=oci"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, flag string) {
		out, err := ParseOutput(flag)
		if err != nil {
			require.Equal(t, Output{}, out)
			return
		}
		require.Contains(t, []string{"oci", "docker"}, out.Type)
		require.NotEmpty(t, out.Dest)
		require.False(t, strings.HasSuffix(out.Dest, tmpSuffix))
	})
}

func TestNewDefaults(t *testing.T) {
	b := New(nil)
	require.Equal(t, DefaultParallel, b.opts.parallel)
	require.Equal(t, 2, b.opts.retries)
	require.Len(t, b.nodes, 1)
	require.Equal(t, "quiet", b.opts.progressMode)
	require.NotNil(t, b.opts.mirrors)

	for _, n := range []int{0, -3} {
		require.Equal(t, 1, New(nil, WithParallel(n)).opts.parallel)
	}
	b = New(nil, WithParallel(5), WithReleases("a", "b"), WithSource("rev", 42), WithPush(true),
		WithContinueOnError(true), WithEntrypointDir("ep"), WithBaseDir("base"),
		WithLocks(map[string]string{"x": "sha256:y"}), WithOutputs(Output{Type: "oci", Dest: "out"}))
	require.Equal(t, 5, b.opts.parallel)
	require.Equal(t, []string{"a", "b"}, b.opts.releases)
	require.Equal(t, "rev", b.opts.revision)
	require.Equal(t, int64(42), b.opts.epoch)
	require.True(t, b.opts.push)
	require.True(t, b.opts.continueOnError)
	require.Equal(t, "ep", b.opts.entrypointDir)
	require.Equal(t, "base", b.opts.baseDir)
	require.Equal(t, map[string]string{"x": "sha256:y"}, b.opts.locks)
	require.Equal(t, []Output{{Type: "oci", Dest: "out"}}, b.opts.outputs)
}
