package computecap

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func FuzzParse(f *testing.F) {
	for _, seed := range []string{"8.7", "87", "sm_87", "compute_87", "sm_90a", "110", "11.0", "sm_110",
		"9.0a", "90a", " 8.7 ", "", "8", "8.7.1", "sm_", "abc", "-87", "sm_8x", "999", "1000", "08.7"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			require.Contains(t, err.Error(), "compute capability ")
			require.Equal(t, Capability{}, c)
			return
		}
		require.True(t, c.Valid(), "%q parsed to %+v", s, c)
		for _, form := range []string{c.String(), c.SM(), c.Digits(), "compute_" + c.Digits()} {
			back, err := Parse(form)
			require.NoError(t, err, "%q from %q", form, s)
			require.Equal(t, c, back, "%q from %q", form, s)
		}
		text, err := c.MarshalText()
		require.NoError(t, err)
		var back Capability
		require.NoError(t, back.UnmarshalText(text))
		require.Equal(t, c, back)
		require.Equal(t, c.Digits(), strings.ReplaceAll(c.String(), ".", ""))
	})
}

func FuzzParseCUDAVersion(f *testing.F) {
	for _, seed := range []string{"12.6", "12.6.11", "13.0", " 11.4 ", "", "12", "v12.6", "12.06", "0.0"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseCUDAVersion(s)
		if err != nil {
			require.Contains(t, err.Error(), "CUDA version ")
			require.Equal(t, CUDAVersion{}, v)
			return
		}
		require.GreaterOrEqual(t, v.Major, 1)
		require.GreaterOrEqual(t, v.Minor, 0)
		back, err := ParseCUDAVersion(v.String())
		require.NoError(t, err)
		require.Equal(t, v, back)
		for _, sm := range []Capability{{Major: 8, Minor: 7}, {Major: 11, Minor: 0}, {Major: 10, Minor: 1}} {
			_ = CanCompile(sm, v)
			require.NotEmpty(t, NVCCArch(sm, v))
		}
	})
}
