package detect

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

func TestParseNvidiaSMI(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "8.6\n", want: "8.6"},
		{in: "\n 9.0 \n9.0\n", want: "9.0"},
		{in: "12.0\n8.9\n", want: "12.0"},
		{in: "[N/A]\n", wantErr: `answered "[N/A]", not a compute capability`},
		{in: "N/A\n", wantErr: `answered "N/A", not a compute capability`},
		{in: "[Not Supported]\n", wantErr: `answered "[Not Supported]", not a compute capability`},
		{in: "", wantErr: "printed no compute capability"},
		{in: "Field \"compute_cap\" is not a valid field to query.\n",
			wantErr: `answered "Field \"compute_cap\" is not a valid field to query.": compute capability "Field \"compute_cap\" is not a valid field to query." is not valid: want forms like 8.7, 87, sm_87 or compute_87`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseNvidiaSMI([]byte(tt.in))
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.String())
		})
	}
}

func TestParseProbeOutput(t *testing.T) {
	got, err := parseProbeOutput([]byte(`{"major":8,"minor":7,"driver_version":12060}` + "\n"))
	require.NoError(t, err)
	require.Equal(t, probeAnswer{GPU: computecap.Capability{Major: 8, Minor: 7}, Driver: computecap.CUDAVersion{Major: 12, Minor: 6}}, got)
	for in, want := range map[string]string{
		`{"major":0,"minor":0,"driver_version":12060}`: "probe reported compute capability 0.0, which is not valid",
		`{"major":8,"minor":7,"driver_version":12}`:    "probe reported driver version 12, which is not a CUDA version like 12060",
		`{"major":8,"minor":7}`:                        `probe printed "{\"major\":8,\"minor\":7}" without major, minor and driver_version`,
		``:                                             `probe printed "", not its JSON line: unexpected end of JSON input`,
	} {
		_, err := parseProbeOutput([]byte(in))
		require.EqualError(t, err, want, in)
	}
}

func TestEnviron(t *testing.T) {
	env := Environ{"A=1", "B=2", "A=3", "C"}
	v, ok := env.Lookup("A")
	require.True(t, ok)
	require.Equal(t, "1", v)
	_, ok = env.Lookup("C")
	require.False(t, ok)
	require.Equal(t, Environ{"B=2", "C", "A=9"}, env.With("A", "9"))
	require.Equal(t, Environ{"A=1", "B=2", "A=3", "C"}, env, "with copies")
	for _, yes := range []string{"1", "true", "YES", " on "} {
		require.True(t, Truthy(yes), yes)
	}
	for _, no := range []string{"", "0", "false", "no", "2"} {
		require.False(t, Truthy(no), no)
	}
}
