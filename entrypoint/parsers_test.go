package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

func TestParseTegraRelease(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "# R36 (release), REVISION: 4.7, GCID: 42132812, BOARD: generic, EABI: aarch64, DATE: Tue Sep  9 22:38:43 UTC 2025\n# KERNEL_VARIANT: oot\n", want: "36.4.7"},
		{in: "# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64, DATE: Sun Mar 19 15:19:21 UTC 2023", want: "35.3.1"},
		{in: "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, DATE: x\n", want: "38.2.0"},
		{in: "  # R32 (release), REVISION: 7\n", want: "32.7.0"},
		{in: "", wantErr: `first line "" does not start with "# R<major>"`},
		{in: "R36 (release), REVISION: 4.7", wantErr: `first line "R36 (release), REVISION: 4.7" does not start with "# R<major>"`},
		{in: "# R (release), REVISION: 4.7", wantErr: `first line "# R (release), REVISION: 4.7": release major: "" is not a number of 1 to 4 digits`},
		{in: "# R36 (release), GCID: 1", wantErr: `first line "# R36 (release), GCID: 1" has no "REVISION: <minor>.<patch>" field`},
		{in: "# R36 (release), REVISION: 4.x", wantErr: `first line "# R36 (release), REVISION: 4.x": REVISION "4.x": L4T version "36.4.x": "x" is not a number of 1 to 4 digits`},
		{in: "# R36 (release), REVISION: 4.7.1", wantErr: `first line "# R36 (release), REVISION: 4.7.1": REVISION "4.7.1": L4T version "36.4.7.1" has more than three parts`},
		{in: "# R0 (release), REVISION: 1.0", wantErr: `first line "# R0 (release), REVISION: 1.0": REVISION "1.0": L4T version "0.1.0" has major 0`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseTegraRelease([]byte(tt.in))
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.String())
		})
	}
}

func TestParseCompatible(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantSoC string
	}{
		{"Orin Nano Super", "nvidia,p3768-0000+p3767-0005-super\x00nvidia,p3767-0005\x00nvidia,tegra234\x00",
			[]string{"nvidia,p3768-0000+p3767-0005-super", "nvidia,p3767-0005", "nvidia,tegra234"}, "tegra234"},
		{"Thor", "nvidia,p4071-0000+p3834-0008\x00nvidia,p3834-0008\x00nvidia,tegra264\x00",
			[]string{"nvidia,p4071-0000+p3834-0008", "nvidia,p3834-0008", "nvidia,tegra264"}, "tegra264"},
		{"Xavier without the last NUL", "nvidia,p2972-0000\x00nvidia,tegra194",
			[]string{"nvidia,p2972-0000", "nvidia,tegra194"}, "tegra194"},
		{"Raspberry Pi", "raspberrypi,5-model-b\x00brcm,bcm2712\x00", []string{"raspberrypi,5-model-b", "brcm,bcm2712"}, ""},
		{"empty", "", nil, ""},
		{"only NULs", "\x00\x00", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseCompatible([]byte(tt.in))
			require.Equal(t, tt.want, got)
			soc, ok := socFromCompatible(got)
			require.Equal(t, tt.wantSoC != "", ok)
			require.Equal(t, tt.wantSoC, soc.Name)
		})
	}
}

func TestParseSocIDAndModel(t *testing.T) {
	id, err := parseSocID([]byte("35\n"))
	require.NoError(t, err)
	require.Equal(t, 35, id)
	_, err = parseSocID([]byte("0x23\n"))
	require.EqualError(t, err, `soc_id: "0x23" is not a number of 1 to 4 digits`)
	require.Equal(t, "NVIDIA Jetson AGX Orin Developer Kit", parseModel([]byte("NVIDIA Jetson AGX Orin Developer Kit\x00")))
	require.Equal(t, "", parseModel(nil))
}

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
	env := environ{"A=1", "B=2", "A=3", "C"}
	v, ok := env.lookup("A")
	require.True(t, ok)
	require.Equal(t, "1", v)
	_, ok = env.lookup("C")
	require.False(t, ok)
	require.Equal(t, environ{"B=2", "C", "A=9"}, env.with("A", "9"))
	require.Equal(t, environ{"A=1", "B=2", "A=3", "C"}, env, "with copies")
	for _, yes := range []string{"1", "true", "YES", " on "} {
		require.True(t, truthy(yes), yes)
	}
	for _, no := range []string{"", "0", "false", "no", "2"} {
		require.False(t, truthy(no), no)
	}
}

func TestNewConfig(t *testing.T) {
	cfg := newConfig([]string{"--explain", "--explain", "x"}, []string{"JETBAKE_SYSROOT=/tmp/r"})
	require.True(t, cfg.explain)
	require.Equal(t, []string{"--explain", "x"}, cfg.routerArgs)
	require.Equal(t, sysroot("/tmp/r"), cfg.root)
	cfg = newConfig(nil, nil)
	require.False(t, cfg.explain)
	require.Equal(t, sysroot("/"), cfg.root)
	require.Equal(t, "/usr/local/bin/jetbake-cudaprobe",
		(&config{env: environ{"JETBAKE_CUDAPROBE=/usr/local/bin/jetbake-cudaprobe"}}).probePath())
}
