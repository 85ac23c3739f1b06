package computecap

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func cuda(major, minor int) CUDAVersion { return CUDAVersion{Major: major, Minor: minor} }

func TestParseCUDAVersion(t *testing.T) {
	tests := []struct {
		in   string
		want CUDAVersion
	}{
		{"12.6", cuda(12, 6)},
		{"12.6.11", cuda(12, 6)},
		{"13.0", cuda(13, 0)},
		{"13.0.0", cuda(13, 0)},
		{" 11.4.19\n", cuda(11, 4)},
		{"12.10", cuda(12, 10)},
		{"9.1", cuda(9, 1)},
		{"12.2.140", cuda(12, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCUDAVersion(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseCUDAVersionRejects(t *testing.T) {
	for _, in := range []string{
		"", "12", "12.", ".6", "12..6", "12.6.", "12.6.11.1", "v12.6", "V12.6.85", "12.6-1",
		"0.0", "0.5", "012.6", "12.06", "-12.6", "12.-6", "12.x", "abc", "12 .6", "12,6", "12345.0",
		"12.6.011", "１２.６",
	} {
		t.Run(in, func(t *testing.T) {
			got, err := ParseCUDAVersion(in)
			require.Equal(t, CUDAVersion{}, got)
			var ve *CUDAVersionError
			require.True(t, errors.As(err, &ve))
			require.Equal(t, in, ve.Input)
		})
	}
	_, err := ParseCUDAVersion("12.x")
	require.EqualError(t, err, `CUDA version "12.x" is not valid: want forms like 12.6 or 12.6.11`)
}

func TestCUDAVersionMethods(t *testing.T) {
	require.Equal(t, "12.6", cuda(12, 6).String())
	require.Equal(t, "13.0", cuda(13, 0).String())
	require.True(t, cuda(12, 9).Less(cuda(13, 0)))
	require.True(t, cuda(12, 6).Less(cuda(12, 10)))
	require.False(t, cuda(13, 0).Less(cuda(13, 0)))
	require.False(t, cuda(13, 0).Less(cuda(12, 9)))

	b, err := cuda(12, 6).MarshalText()
	require.NoError(t, err)
	require.Equal(t, "12.6", string(b))
	b, err = CUDAVersion{}.MarshalText()
	require.NoError(t, err)
	require.Empty(t, b)

	var v CUDAVersion
	require.NoError(t, v.UnmarshalText([]byte("12.6.11")))
	require.Equal(t, cuda(12, 6), v)
	require.NoError(t, v.UnmarshalText(nil))
	require.Equal(t, CUDAVersion{}, v)
	require.ErrorContains(t, v.UnmarshalText([]byte("12")), `CUDA version "12" is not valid`)
}

func TestCanCompile(t *testing.T) {
	tests := []struct {
		sm     Capability
		cuda   CUDAVersion
		reason string // empty: it builds
	}{
		{mk(5, 3), cuda(6, 5), "sm_53 needs CUDA >= 7.0"},
		{mk(5, 3), cuda(7, 0), ""},
		{mk(5, 3), cuda(12, 9), ""},
		{mk(5, 3), cuda(13, 0), "sm_53 is not a target from CUDA 13.0 on"},
		{mk(6, 2), cuda(7, 5), "sm_62 needs CUDA >= 8.0"},
		{mk(6, 2), cuda(8, 0), ""},
		{mk(6, 2), cuda(12, 9), ""},
		{mk(6, 2), cuda(13, 0), "not a target from CUDA 13.0 on"},
		{mk(7, 0), cuda(8, 0), "sm_70 needs CUDA >= 9.0"},
		{mk(7, 0), cuda(9, 0), ""},
		{mk(7, 0), cuda(12, 9), ""},
		{mk(7, 0), cuda(13, 0), "Volta was removed in CUDA 13.0"},
		{mk(7, 2), cuda(9, 0), "sm_72 needs CUDA >= 9.1"},
		{mk(7, 2), cuda(9, 1), ""},
		{mk(7, 2), cuda(12, 9), ""},
		{mk(7, 2), cuda(13, 0), "use a CUDA from 9.1 up to but not including 13.0"},
		{mk(7, 2), cuda(13, 2), "not a target from CUDA 13.0 on"},
		{mk(7, 5), cuda(9, 2), "sm_75 needs CUDA >= 10.0"},
		{mk(7, 5), cuda(10, 0), ""},
		{mk(7, 5), cuda(13, 0), ""},
		{mk(8, 0), cuda(10, 2), "sm_80 needs CUDA >= 11.0"},
		{mk(8, 0), cuda(11, 0), ""},
		{mk(8, 6), cuda(11, 0), "sm_86 needs CUDA >= 11.1"},
		{mk(8, 6), cuda(11, 1), ""},
		{mk(8, 7), cuda(11, 3), "sm_87 needs CUDA >= 11.4"},
		{mk(8, 7), cuda(11, 4), ""},
		{mk(8, 7), cuda(12, 6), ""},
		{mk(8, 7), cuda(13, 0), ""},
		{mk(8, 7), cuda(13, 2), ""},
		{mk(8, 9), cuda(11, 7), "sm_89 needs CUDA >= 11.8"},
		{mk(8, 9), cuda(11, 8), ""},
		{mk(9, 0), cuda(11, 7), "sm_90 needs CUDA >= 11.8"},
		{mk(9, 0), cuda(11, 8), ""},
		{mkA(9, 0), cuda(11, 8), "sm_90a needs CUDA >= 12.0"},
		{mkA(9, 0), cuda(12, 0), ""},
		{mk(10, 0), cuda(12, 7), "sm_100 needs CUDA >= 12.8"},
		{mk(10, 0), cuda(12, 8), ""},
		{mkA(10, 0), cuda(12, 7), "sm_100a needs CUDA >= 12.8"},
		{mkA(10, 0), cuda(12, 8), ""},
		{mk(10, 3), cuda(12, 8), "sm_103 needs CUDA >= 12.9"},
		{mk(10, 3), cuda(12, 9), ""},
		{mk(12, 0), cuda(12, 7), "sm_120 needs CUDA >= 12.8"},
		{mk(12, 0), cuda(12, 8), ""},
		{mkA(12, 0), cuda(12, 8), ""},
		{mk(12, 1), cuda(12, 8), "sm_121 needs CUDA >= 12.9"},
		{mk(12, 1), cuda(12, 9), ""},
		{mk(12, 1), cuda(13, 0), ""},
		// Thor as sm_101: CUDA 12.8 and 12.9 only.
		{mk(10, 1), cuda(12, 6), "sm_101 needs CUDA 12.8 or 12.9"},
		{mk(10, 1), cuda(12, 7), "sm_101 needs CUDA 12.8 or 12.9"},
		{mk(10, 1), cuda(12, 8), ""},
		{mk(10, 1), cuda(12, 9), ""},
		{mk(10, 1), cuda(13, 0), "sm_101 is invalid from CUDA 13.0 on, where Thor is sm_110: build sm_110"},
		{mk(10, 1), cuda(13, 2), "sm_101 is invalid from CUDA 13.0 on"},
		{mkA(10, 1), cuda(12, 8), ""},
		{mkA(10, 1), cuda(13, 0), "sm_101a is invalid from CUDA 13.0 on"},
		// Thor as sm_110: CUDA 13.0 and later.
		{mk(11, 0), cuda(12, 6), "sm_110 needs CUDA >= 13.0 (CUDA 12.8-12.9 knew Thor as sm_101"},
		{mk(11, 0), cuda(12, 8), "CUDA 12.8 calls Thor sm_101 (12.8-12.9 only), and a CUDA 12.x toolchain cannot produce a working sm_110 binary"},
		{mk(11, 0), cuda(12, 9), "CUDA 12.9 calls Thor sm_101"},
		{mk(11, 0), cuda(13, 0), ""},
		{mk(11, 0), cuda(13, 2), ""},
		{mkA(11, 0), cuda(13, 0), "sm_110a is not accepted by every nvcc; build plain sm_110"},
		// Unknown SMs.
		{mk(3, 5), cuda(11, 0), "jetbake knows no CUDA release that builds sm_35; the SMs it knows: Jetson 5.3 (Nano/TX1)"},
		{mk(8, 8), cuda(12, 6), "jetbake knows no CUDA release that builds sm_88"},
		{mkA(8, 7), cuda(12, 6), "jetbake knows no CUDA release that builds sm_87a"},
		{mk(13, 0), cuda(13, 0), "; a newer jetbake may know sm_130"},
		// Invalid inputs.
		{Capability{}, cuda(12, 6), "0.0 is not a valid compute capability"},
		{mk(8, 7), CUDAVersion{}, "CUDA 0.0 is not a valid CUDA version"},
	}
	for _, tt := range tests {
		t.Run(tt.sm.SM()+"/"+tt.cuda.String(), func(t *testing.T) {
			err := CanCompile(tt.sm, tt.cuda)
			if tt.reason == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.reason)
			var te *ToolchainError
			require.True(t, errors.As(err, &te))
			require.Equal(t, tt.sm, te.SM)
			require.Equal(t, tt.cuda, te.CUDA)
		})
	}
}

func TestToolchainErrorText(t *testing.T) {
	// An SM without a row: what a user of the binary can do, no source file.
	require.EqualError(t, CanCompile(mk(9, 9), cuda(12, 6)),
		"CUDA 12.6 cannot build sm_99: jetbake knows no CUDA release that builds sm_99; the SMs it knows: "+
			"Jetson 5.3 (Nano/TX1), 6.2 (TX2), 7.2 (Xavier), 8.7 (Orin), 11.0 (Thor, also 10.1); "+
			"desktop and server GPUs 5.0, 5.2, 6.0, 6.1, 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 12.0, 12.1; a newer jetbake may know sm_99")
	require.EqualError(t, CanCompile(mk(11, 0), cuda(12, 8)),
		"CUDA 12.8 cannot build sm_110: sm_110 needs CUDA >= 13.0; CUDA 12.8 calls Thor sm_101 (12.8-12.9 only), "+
			"and a CUDA 12.x toolchain cannot produce a working sm_110 binary")
	require.EqualError(t, CanCompile(mk(8, 7), cuda(11, 3)), "CUDA 11.3 cannot build sm_87: sm_87 needs CUDA >= 11.4")
	require.EqualError(t, CanCompile(mk(7, 2), cuda(13, 0)),
		"CUDA 13.0 cannot build sm_72: sm_72 is not a target from CUDA 13.0 on (offline compilation for Maxwell, "+
			"Pascal and Volta was removed in CUDA 13.0); use a CUDA from 9.1 up to but not including 13.0")
}

// TestToolchainTable checks that the table has one row per SM, none for
// Thor, and sane bounds.
func TestToolchainTable(t *testing.T) {
	seen := map[Capability]bool{}
	for _, row := range toolchainRows() {
		require.True(t, row.SM.Valid(), row.SM.String())
		require.False(t, seen[row.SM], "duplicate row for %v", row.SM)
		seen[row.SM] = true
		require.NotEqual(t, 11, row.SM.Canonical().Major, "Thor belongs to thorToolchain")
		require.False(t, row.Since.IsZero())
		if !row.Until.IsZero() {
			require.True(t, row.Since.Less(row.Until))
			require.NotEmpty(t, row.Gone)
		}
		require.NoError(t, CanCompile(row.SM, row.Since))
	}
}

func TestNVCCArch(t *testing.T) {
	tests := []struct {
		sm   Capability
		cuda CUDAVersion
		want string
	}{
		{mk(11, 0), cuda(12, 8), "sm_101"},
		{mk(11, 0), cuda(12, 9), "sm_101"},
		{mk(10, 1), cuda(12, 9), "sm_101"},
		{mk(10, 1), cuda(13, 0), "sm_110"},
		{mk(11, 0), cuda(13, 0), "sm_110"},
		{mk(11, 0), cuda(13, 2), "sm_110"},
		{mkA(10, 1), cuda(13, 0), "sm_110a"},
		{mkA(11, 0), cuda(12, 8), "sm_101a"},
		{mk(11, 0), cuda(12, 6), "sm_101"},
		{mk(8, 7), cuda(12, 6), "sm_87"},
		{mk(8, 7), cuda(13, 0), "sm_87"},
		{mkA(9, 0), cuda(12, 6), "sm_90a"},
		{mk(12, 1), cuda(12, 9), "sm_121"},
		{mk(10, 0), cuda(12, 8), "sm_100"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, NVCCArch(tt.sm, tt.cuda), "%v with CUDA %v", tt.sm, tt.cuda)
	}
}

// nvcc's --list-gpu-code comes from the same rows as CanCompile: an SM is
// listed under a CUDA exactly when CanCompile allows it there (by nvcc's
// name for it under that CUDA).
func TestGPUCodesAgreeWithCanCompile(t *testing.T) {
	names := func(caps []Capability) []string {
		var out []string
		for _, c := range caps {
			out = append(out, c.SM())
		}
		return out
	}
	require.Equal(t, []string{"sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90"},
		names(GPUCodes(cuda(12, 6))))
	require.Equal(t, []string{"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110", "sm_120", "sm_121"},
		names(GPUCodes(cuda(13, 0))), "CUDA 13: no sm_72, Thor is sm_110")
	require.Contains(t, names(GPUCodes(cuda(12, 9))), "sm_101", "Thor is sm_101 under CUDA 12.8 and 12.9")
	require.NotContains(t, names(GPUCodes(cuda(12, 9))), "sm_110")
	require.NotContains(t, names(GPUCodes(cuda(11, 4))), "sm_89")
	for _, v := range []CUDAVersion{cuda(11, 4), cuda(12, 2), cuda(12, 6), cuda(12, 8), cuda(12, 9), cuda(13, 0), cuda(13, 2)} {
		listed := GPUCodes(v)
		for _, row := range DefaultTable().Toolchain {
			if row.SM.ArchSpecific {
				continue
			}
			require.Equal(t, CanCompile(row.SM, v) == nil, slices.Contains(listed, row.SM), "%s under CUDA %s", row.SM.SM(), v)
		}
		for _, thor := range []Capability{MustParse("10.1"), MustParse("11.0")} {
			require.Equal(t, CanCompile(thor, v) == nil, slices.Contains(listed, thor), "%s under CUDA %s", thor.SM(), v)
			if CanCompile(thor, v) == nil {
				require.Equal(t, thor.SM(), NVCCArch(thor, v), "listed by its name under CUDA %s", v)
			}
		}
	}
}
