package tei

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/computecap"
)

func kernelNames(t *testing.T, program []byte) []string {
	t.Helper()
	entries, err := fatbin.ReadELF(bytes.NewReader(program), fatbin.Limits{})
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.String())
	}
	return out
}

// The stand-in cargo writes the build's CUDA_COMPUTE_CAP into the
// flash-attention kernels of the template, as candle-flash-attn compiles
// them for it; the kernels of CUDA's static libraries stay as they are.
func TestSetKernelSM(t *testing.T) {
	lib := []fatbintest.Code{fatbintest.Cubin("8.7"), fatbintest.Cubin("9.0"), fatbintest.PTX("9.0")}
	program := fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", FlashKernels(PlaceholderSM()), lib))
	require.Equal(t, []string{"sm_10 cubin", "compute_10 PTX", "sm_87 cubin", "sm_90 cubin", "compute_90 PTX"}, kernelNames(t, program))

	for sm, want := range map[int][]string{
		80:  {"sm_80 cubin", "compute_80 PTX"},
		110: {"sm_110 cubin", "compute_110 PTX"},
	} {
		p := bytes.Clone(program)
		n, err := SetKernelSM(p, sm)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, append(want, "sm_87 cubin", "sm_90 cubin", "compute_90 PTX"), kernelNames(t, p))
	}

	plain := fatbintest.ELF(fatbintest.Filler(64))
	n, err := SetKernelSM(plain, 87)
	require.NoError(t, err)
	require.Zero(t, n, "a router without GPU code stays as it is")
	_, err = SetKernelSM([]byte("#!/bin/sh\n"), 87)
	require.ErrorContains(t, err, "not an ELF file")
	_, err = SetKernelSM(bytes.Clone(program), 0)
	require.ErrorContains(t, err, "not an SM")
	require.Equal(t, computecap.MustParse("1.0"), PlaceholderSM())
}
