package localoutput

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
			got, err := Parse(tt.flag)
			if tt.wantErr != "" {
				var oe *Error
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

func FuzzParse(f *testing.F) {
	for _, seed := range []string{"type=oci,dest=out", "type=docker,dest=a.tar", "", "type=x", "dest=,type=oci"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, flag string) {
		out, err := Parse(flag)
		if err != nil {
			require.Equal(t, Output{}, out)
			return
		}
		require.Contains(t, []string{"oci", "docker"}, out.Type)
		require.NotEmpty(t, out.Dest)
		require.False(t, strings.HasSuffix(out.Dest, PartialSuffix))
	})
}

func TestOutputPath(t *testing.T) {
	tests := []struct {
		name  string
		out   Output
		multi bool
		want  string
	}{
		{name: "oci single", out: Output{Type: "oci", Dest: "out"}, want: "out"},
		{name: "docker single", out: Output{Type: "docker", Dest: "out/tei.tar"}, want: "out/tei.tar"},
		{name: "oci multi", out: Output{Type: "oci", Dest: "out"}, multi: true, want: "out/jetpack6.2"},
		{name: "docker multi", out: Output{Type: "docker", Dest: "out/tei.tar"}, multi: true, want: "out/tei-jetpack6.2.tar"},
		{name: "docker multi without extension", out: Output{Type: "docker", Dest: "out/tei"}, multi: true, want: "out/tei-jetpack6.2.tar"},
		{name: "docker multi dotted folder", out: Output{Type: "docker", Dest: "v1.2/tei"}, multi: true, want: "v1.2/tei-jetpack6.2.tar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Path(tt.out, "jetpack6.2", tt.multi))
		})
	}
}
