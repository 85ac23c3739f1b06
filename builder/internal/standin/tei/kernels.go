package tei

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/computecap"
)

// PlaceholderSM returns the SM the router templates' flash-attention kernels
// are written for: sm_30, which no CUDA release that builds for a Jetson
// compiles (CUDA 11 removed Kepler's sm_30) and which NVIDIA's cuobjdump
// still lists (it refuses sm_10 to sm_20 outright). The stand-in cargo writes the build's CUDA_COMPUTE_CAP over
// it (SetKernelSM), as candle-flash-attn's build script compiles its
// kernels for CUDA_COMPUTE_CAP, so that a router holds the code of the SM
// it was compiled for, whatever the release wanted.
func PlaceholderSM() computecap.Capability { return computecap.Capability{Major: 3, Minor: 0} }

// FlashKernels are candle-flash-attn's kernels as its build script
// compiles them for sm (bindgen_cuda's build_lib: nvcc
// --gpu-architecture=sm_XX, which writes an sm_XX cubin and compute_XX
// PTX in one fat binary). Written for PlaceholderSM, the module is the
// slot that the fat binaries of the build's real device code fill
// (SetKernels): it is larger than they are (the stand-in crate's kernels
// compiled by NVIDIA's nvcc 11.8 take about 23 KB for sm_87).
func FlashKernels(sm computecap.Capability) []fatbintest.Code {
	ptx := fatbintest.Code{Kind: fatbin.KindPTX, SM: sm, Size: 40000}
	cubin := fatbintest.Code{Kind: fatbin.KindCubin, SM: sm, Size: 24000}
	return []fatbintest.Code{ptx, cubin}
}

// FlashFatbinPath is where a stand-in build image keeps NVIDIA's real
// fat binary of candle-flash-attn's kernels for sm (72 for sm_72), made by
// ptxas and fatbinary (CUDA 11.8 cannot target Thor's SMs, whose kernels
// stay the writer's).
func FlashFatbinPath(sm int) string {
	return filepath.Join(StandinDir, "cargo", "flash-attn", "sm_"+strconv.Itoa(sm)+".fatbin")
}

// SetKernels gives program the flash-attention kernels of sm: with real
// (fat binaries of real device code for sm: what the router's link took
// from the build's archive, see BuildPlan.Kernels, or NVIDIA's fat binary
// of FlashFatbinPath) it writes real over the template's module, else it
// writes sm into the arch fields of the template's (SetKernelSM). It
// returns how many entries it wrote.
func SetKernels(program []byte, sm int, real []byte) (int, error) {
	if real == nil {
		return SetKernelSM(program, sm)
	}
	slots, err := placeholderModules(program)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, slot := range slots {
		k, err := fillSlot(slot, real)
		if err != nil {
			return 0, fmt.Errorf("the fat binaries of the kernels compiled for sm_%d: %w", sm, err)
		}
		n += k
	}
	return n, nil
}

// placeholderModules are the fat binaries of program's .nv_fatbin whose
// entries are all written for PlaceholderSM, as slices of program.
func placeholderModules(program []byte) ([][]byte, error) {
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		return nil, fmt.Errorf("the router template is not an ELF file: %w", err)
	}
	var out [][]byte
	for _, s := range f.Sections {
		if s.Name != ".nv_fatbin" || s.Type == elf.SHT_NOBITS {
			continue
		}
		sec := program[s.Offset : s.Offset+s.Size]
		entries, err := fatbin.Parse(bytes.NewReader(sec), int64(len(sec)), s.Name, fatbin.Limits{})
		if err != nil {
			return nil, fmt.Errorf("the router template's fat binary: %w", err)
		}
		for _, m := range fatbin.Modules(entries) {
			if slices.ContainsFunc(m, func(e fatbin.Entry) bool { return e.SM != PlaceholderSM() }) {
				continue
			}
			start := m[0].Fatbin
			size := int64(binary.LittleEndian.Uint16(sec[start+6:])) + int64(binary.LittleEndian.Uint64(sec[start+8:]))
			out = append(out, sec[start:start+size])
		}
	}
	return out, nil
}

// fillSlot writes real, one fat binary or several back to back (as a
// linker leaves the .nv_fatbin sections of the objects it took), over slot
// and grows the last uncompressed cubin of the last fat binary by the
// bytes real lacks, as zeros after it (the entries behind it move up): a
// cubin is an ELF file, whose readers (the driver, cuobjdump) read no
// further than its own headers say, so the section keeps its size and the
// program its layout. nvcc 11.8 compresses the PTX it writes beside a
// cubin, so the cubin, not the fat binary's last entry, takes the bytes.
// It returns how many entries real holds.
func fillSlot(slot, real []byte) (int, error) {
	entries, err := fatbin.Parse(bytes.NewReader(real), int64(len(real)), "fatbin", fatbin.Limits{})
	if err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	modules := fatbin.Modules(entries)
	if len(modules) == 0 {
		return 0, fmt.Errorf("they hold no code")
	}
	lastModule := modules[len(modules)-1]
	start := lastModule[0].Fatbin
	switch {
	case start+int64(le.Uint16(real[start+6:]))+int64(le.Uint64(real[start+8:])) != int64(len(real)):
		return 0, fmt.Errorf("they are not %d bytes of whole fat binaries", len(real))
	case len(real) > len(slot):
		return 0, fmt.Errorf("they take %d bytes, more than the template's %d", len(real), len(slot))
	}
	var cubin *fatbin.Entry
	for k := len(lastModule) - 1; k >= 0; k-- {
		if e := lastModule[k]; e.Kind == fatbin.KindCubin && !e.Compressed {
			cubin = &lastModule[k]
			break
		}
	}
	if cubin == nil {
		return 0, fmt.Errorf("their last fat binary holds no uncompressed cubin to take the template's %d bytes more", len(slot)-len(real))
	}
	end := cubin.Offset + int64(le.Uint32(real[cubin.Offset+4:])) + int64(le.Uint64(real[cubin.Offset+8:]))
	gap := len(slot) - len(real)
	copy(slot, real[:end])
	clear(slot[end : end+int64(gap)])
	copy(slot[end+int64(gap):], real[end:])
	le.PutUint64(slot[start+8:], le.Uint64(slot[start+8:])+uint64(gap))
	le.PutUint64(slot[cubin.Offset+8:], le.Uint64(slot[cubin.Offset+8:])+uint64(gap))
	return len(entries), nil
}

// setCubinSM writes sm into a cubin's ELF header, where cuobjdump and the
// driver read its SM: e_flags holds the SM in its low byte and the virtual
// SM (the PTX it was compiled from) in its third.
func setCubinSM(cubin []byte, sm int) {
	if len(cubin) < 52 || string(cubin[:4]) != elf.ELFMAG || elf.Machine(binary.LittleEndian.Uint16(cubin[18:])) != elf.EM_CUDA {
		return
	}
	flags := binary.LittleEndian.Uint32(cubin[48:])
	binary.LittleEndian.PutUint32(cubin[48:], flags&^0xff00ff|uint32(sm&0xff)|uint32(sm&0xff)<<16)
}

// SetKernelSM writes sm (87 for 8.7) into the arch field of every entry
// of program's fat binaries written for PlaceholderSM, and into the ELF
// header of each such cubin, in place, and
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
			header := program[int64(s.Offset)+e.Offset:]
			binary.LittleEndian.PutUint32(header[28:], uint32(sm))
			if e.Kind == fatbin.KindCubin && !e.Compressed {
				setCubinSM(header[binary.LittleEndian.Uint32(header[4:]):][:e.Size], sm)
			}
			n++
		}
	}
	return n, nil
}
