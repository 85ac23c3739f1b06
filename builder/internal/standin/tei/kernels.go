package tei

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/computecap"
)

// PlaceholderSM returns the SM the router templates' flash-attention kernels
// are written for: sm_10, which no CUDA release that builds for a Jetson
// compiles. The stand-in cargo writes the build's CUDA_COMPUTE_CAP over
// it (SetKernelSM), as candle-flash-attn's build script compiles its
// kernels for CUDA_COMPUTE_CAP, so that a router holds the code of the SM
// it was compiled for, whatever the release wanted.
func PlaceholderSM() computecap.Capability { return computecap.Capability{Major: 1, Minor: 0} }

// FlashKernels are candle-flash-attn's kernels as its build script
// compiles them for sm (bindgen_cuda's build_lib: nvcc
// --gpu-architecture=sm_XX, which writes an sm_XX cubin and compute_XX
// PTX, in one fat binary).
func FlashKernels(sm computecap.Capability) []fatbintest.Code {
	cubin := fatbintest.Code{Kind: fatbin.KindCubin, SM: sm, Size: 4000}
	ptx := fatbintest.Code{Kind: fatbin.KindPTX, SM: sm, Size: 6000}
	return []fatbintest.Code{cubin, ptx}
}

// SetKernelSM writes sm (87 for 8.7) into the arch field of every entry
// of program's fat binaries written for PlaceholderSM, in place, and
// returns how many it wrote; a program without them is left as it is.
func SetKernelSM(program []byte, sm int) (int, error) {
	if sm <= 0 || sm > 999 {
		return 0, fmt.Errorf("CUDA_COMPUTE_CAP %d is not an SM such as 87", sm)
	}
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		return 0, fmt.Errorf("the router template is not an ELF file: %w", err)
	}
	n := 0
	for _, s := range f.Sections {
		if s.Name != ".nv_fatbin" || s.Type == elf.SHT_NOBITS {
			continue
		}
		entries, err := fatbin.Parse(io.NewSectionReader(bytes.NewReader(program), int64(s.Offset), int64(s.Size)),
			int64(s.Size), s.Name, fatbin.Limits{})
		if err != nil {
			return 0, fmt.Errorf("the router template's fat binary: %w", err)
		}
		for _, e := range entries {
			if e.SM != PlaceholderSM() {
				continue
			}
			// The arch is the u32 at offset 28 of the entry's header.
			binary.LittleEndian.PutUint32(program[int64(s.Offset)+e.Offset+28:], uint32(sm))
			n++
		}
	}
	return n, nil
}
