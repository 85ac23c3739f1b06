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
	require.Equal(t, []string{"compute_30 PTX", "sm_30 cubin", "sm_87 cubin", "sm_90 cubin", "compute_90 PTX"}, kernelNames(t, program))

	for sm, want := range map[int][]string{
		80:  {"compute_80 PTX", "sm_80 cubin"},
		110: {"compute_110 PTX", "sm_110 cubin"},
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
	require.Equal(t, computecap.MustParse("3.0"), PlaceholderSM())
}

// With NVIDIA's real fat binary for the SM (here one the writer makes
// alike: PTX, then an uncompressed cubin), the stand-in cargo writes it
// over the template's module, which keeps its size: the cubin takes the
// bytes the real one lacks.
func TestSetKernelsReal(t *testing.T) {
	lib := []fatbintest.Code{fatbintest.Cubin("8.7"), fatbintest.PTX("8.7")}
	program := fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", FlashKernels(PlaceholderSM()), lib))
	real := fatbintest.Fatbin(fatbintest.PTX("8.7"), fatbintest.Cubin("8.7"))
	p := bytes.Clone(program)
	n, err := SetKernels(p, 87, real)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Len(t, p, len(program))
	require.Equal(t, []string{"compute_87 PTX", "sm_87 cubin", "sm_87 cubin", "compute_87 PTX"}, kernelNames(t, p))
	ptxEntry := real[fatbin.HeaderSize : fatbin.HeaderSize+fatbin.EntryHeaderSize+1504]
	require.True(t, bytes.Contains(p, ptxEntry), "the real fat binary's PTX entry, as it is")

	_, err = SetKernels(bytes.Clone(program), 87, fatbintest.Fatbin(fatbintest.Cubin("8.7"), fatbintest.PTX("8.7")))
	require.ErrorContains(t, err, "its last entry is compute_87 PTX, not an uncompressed cubin")
	big := fatbintest.Fatbin(fatbintest.Code{Kind: fatbin.KindCubin, SM: computecap.MustParse("8.7"), Size: 20000})
	_, err = SetKernels(bytes.Clone(program), 87, big)
	require.ErrorContains(t, err, "more than the template's")
	_, err = SetKernels(bytes.Clone(program), 87, append(bytes.Clone(real), real...))
	require.ErrorContains(t, err, "not one fat binary")
}
