package host

import (
	"strings"
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
			got, err := ParseTegraRelease([]byte(tt.in))
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
			got := ParseCompatible([]byte(tt.in))
			require.Equal(t, tt.want, got)
			soc, ok := computecap.DefaultTable().SoCFromCompatible(got)
			require.Equal(t, tt.wantSoC != "", ok)
			require.Equal(t, tt.wantSoC, soc.Name)
		})
	}
}

func TestParseSocIDAndModel(t *testing.T) {
	id, err := ParseSocID([]byte("35\n"))
	require.NoError(t, err)
	require.Equal(t, 35, id)
	_, err = ParseSocID([]byte("0x23\n"))
	require.EqualError(t, err, `soc_id: "0x23" is not a number of 1 to 4 digits`)
	require.Equal(t, "NVIDIA Jetson AGX Orin Developer Kit", ParseModel([]byte("NVIDIA Jetson AGX Orin Developer Kit\x00")))
	require.Equal(t, "", ParseModel(nil))
}

func FuzzParseCompatible(f *testing.F) {
	f.Add([]byte("nvidia,p3768-0000+p3767-0005-super\x00nvidia,p3767-0005\x00nvidia,tegra234\x00"))
	f.Add([]byte("nvidia,p4071-0000+p3834-0008\x00nvidia,p3834-0008\x00nvidia,tegra264\x00"))
	f.Add([]byte("\x00 \x00tegra194"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries := ParseCompatible(data)
		for _, e := range entries {
			if e == "" || strings.Contains(e, "\x00") || strings.TrimSpace(e) != e {
				t.Fatalf("bad entry %q from %q", e, data)
			}
		}
		if soc, ok := computecap.DefaultTable().SoCFromCompatible(entries); ok && !soc.Capability.Valid() {
			t.Fatalf("SoC %+v without a valid capability", soc)
		}
	})
}
