package tei

import (
	"bytes"
	"fmt"
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

// With the fat binaries of real device code for the SM (here ones the
// writer makes alike), the stand-in cargo writes them over the template's
// module, which keeps its size: the last fat binary's last uncompressed
// cubin takes the bytes they lack. nvcc 11.8 writes a cubin, then
// compressed PTX, one fat binary an object, and the linker puts the
// objects' fat binaries back to back; NVIDIA's ptxas and fatbinary (the
// native path's) write PTX, then the cubin.
func TestSetKernelsReal(t *testing.T) {
	lib := []fatbintest.Code{fatbintest.Cubin("8.7"), fatbintest.PTX("8.7")}
	program := fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", FlashKernels(PlaceholderSM()), lib))
	compressedPTX := fatbintest.Code{Kind: fatbin.KindPTX, SM: computecap.MustParse("8.7"), Size: 700, Compressed: true}
	nvcc := fatbintest.Fatbin(fatbintest.Cubin("8.7"), compressedPTX)
	for name, tc := range map[string]struct {
		real []byte
		want []string
	}{
		"ptxas and fatbinary": {real: fatbintest.Fatbin(fatbintest.PTX("8.7"), fatbintest.Cubin("8.7")),
			want: []string{"compute_87 PTX", "sm_87 cubin"}},
		"nvcc, one object": {real: nvcc, want: []string{"sm_87 cubin", "compute_87 PTX"}},
		"nvcc, the link of three objects": {real: bytes.Join([][]byte{nvcc, nvcc, nvcc}, nil),
			want: []string{"sm_87 cubin", "compute_87 PTX", "sm_87 cubin", "compute_87 PTX", "sm_87 cubin", "compute_87 PTX"}},
	} {
		t.Run(name, func(t *testing.T) {
			p := bytes.Clone(program)
			n, err := SetKernels(p, 87, tc.real)
			require.NoError(t, err)
			require.Equal(t, len(tc.want), n)
			require.Len(t, p, len(program))
			require.Equal(t, append(tc.want, "sm_87 cubin", "compute_87 PTX"), kernelNames(t, p))
			if tc.want[len(tc.want)-1] == "compute_87 PTX" {
				ptx := tc.real[len(tc.real)-fatbin.EntryHeaderSize-704:]
				require.True(t, bytes.Contains(p, ptx), "the compressed PTX behind the grown cubin, as nvcc wrote it")
			}
		})
	}

	_, err := SetKernels(bytes.Clone(program), 87, fatbintest.Fatbin(fatbintest.PTX("8.7"), compressedPTX))
	require.ErrorContains(t, err, "holds no uncompressed cubin")
	big := fatbintest.Fatbin(fatbintest.Code{Kind: fatbin.KindCubin, SM: computecap.MustParse("8.7"), Size: 80000})
	_, err = SetKernels(bytes.Clone(program), 87, big)
	require.ErrorContains(t, err, "more than the template's")
	_, err = SetKernels(bytes.Clone(program), 87, append(bytes.Clone(nvcc), 0, 0, 0, 0, 0, 0, 0, 0))
	require.ErrorContains(t, err, fmt.Sprintf("not %d bytes of whole fat binaries", len(nvcc)+8))
}
