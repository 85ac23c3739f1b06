package standin

import (
	"context"
	"fmt"
	"strings"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/computecap"
)

// The stand-ins' GPU code: CUDA's libraries and TEI's router hold their
// kernels in a .nv_fatbin section laid out as nvcc writes it (package
// fatbintest writes the bytes), so that jetbake's audit reads them as it
// reads the real ones.

// LibraryKernels is the GPU code a CUDA library that ships kernels
// (cuBLAS, cuBLASLt, cuRAND) holds for CUDA release cuda: a cubin for
// every SM its nvcc builds (computecap.GPUCodes) and PTX of the newest,
// for the GPUs that come after it.
func LibraryKernels(cuda string) ([]fatbintest.Code, error) {
	v, err := computecap.ParseCUDAVersion(majorMinor(cuda))
	if err != nil {
		return nil, fmt.Errorf("stand-in CUDA library: %w", err)
	}
	sms := computecap.GPUCodes(v)
	if len(sms) == 0 {
		return nil, fmt.Errorf("stand-in CUDA library: CUDA %s builds for no SM in the facts table", cuda)
	}
	var out []fatbintest.Code
	for _, sm := range sms {
		out = append(out, fatbintest.Code{Kind: fatbin.KindCubin, SM: sm, Size: 2000})
	}
	return append(out, fatbintest.Code{Kind: fatbin.KindPTX, SM: sms[len(sms)-1], Size: 3000}), nil
}

// perGPUModules are the modules a stand-in CUDA library holds besides its
// release's kernels that hold only one GPU's code, as NVIDIA ships them
// (real cuBLAS 11.8 has 35 modules with sm_35 code only and one with sm_60
// and sm_61 only): CUDA 12.6's cuBLAS, which the JetPack 6 bases carry,
// has one with sm_90 code only, which Orin's audit reads as partial.
func perGPUModules(soname, cuda string) [][]fatbintest.Code {
	if strings.HasPrefix(soname, "libcublas.so.") && majorMinor(cuda) == "12.6" {
		return [][]fatbintest.Code{{fatbintest.Cubin("9.0")}}
	}
	return nil
}

// Module is one fat binary (a module the driver loads as a whole) of a
// stand-in library: the writer's (package fatbintest) of Codes or, with
// Real set, NVIDIA's own, made by ptxas and fatbinary (package nvreal).
type Module struct {
	Codes []fatbintest.Code
	Real  *nvreal.FatbinSpec
}

// Written is a module the writer writes for codes.
func Written(codes ...fatbintest.Code) Module { return Module{Codes: codes} }

// Real is NVIDIA's real fat binary of spec as a module.
func Real(spec nvreal.FatbinSpec) Module { return Module{Real: &spec} }

// fatbins are the bytes of modules; a real one is read from (or made into)
// the cache of NVIDIA's parts of the checkout at k.Source.
func (k Kit) fatbins(ctx context.Context, modules []Module) ([][]byte, error) {
	var out [][]byte
	for _, m := range modules {
		if m.Real == nil {
			out = append(out, fatbintest.Fatbin(m.Codes...))
			continue
		}
		p, err := nvreal.Find(k.Source)
		if err != nil {
			return nil, fmt.Errorf("stand-in with NVIDIA's real device code: %w", err)
		}
		data, err := p.Fatbin(ctx, *m.Real)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// fatbinSource is C that puts the fat binaries of modules, back to back,
// in a .nv_fatbin section, 8-aligned as nvcc's host objects have it;
// `used` keeps it through the link although nothing refers to it.
func fatbinSource(modules [][]byte) []byte {
	var b strings.Builder
	b.WriteString("__attribute__((section(\".nv_fatbin\"), aligned(8), used))\nstatic const unsigned char jetbake_standin_fatbin[] = {")
	i := 0
	for _, m := range modules {
		for _, c := range m {
			if i%16 == 0 {
				b.WriteString("\n\t")
			}
			fmt.Fprintf(&b, "0x%02x,", c)
			i++
		}
		// nvcc 8-aligns every fat binary in the section.
		for ; i%8 != 0; i++ {
			b.WriteString("0x00,")
		}
	}
	b.WriteString("\n};\n")
	return []byte(b.String())
}

// BuildCUDALibrary compiles a shared object with soname whose .nv_fatbin
// holds one fat binary per module, written for its codes, for arch into
// cacheDir, and returns its path.
func BuildCUDALibrary(ctx context.Context, cacheDir string, arch Arch, soname string, modules ...[]fatbintest.Code) (string, error) {
	var fatbins [][]byte
	for _, m := range modules {
		fatbins = append(fatbins, fatbintest.Fatbin(m...))
	}
	return BuildFatbinLibrary(ctx, cacheDir, arch, soname, fatbins...)
}

// BuildFatbinLibrary compiles a shared object with soname whose .nv_fatbin
// holds fatbins, back to back, for arch into cacheDir, and returns its path.
func BuildFatbinLibrary(ctx context.Context, cacheDir string, arch Arch, soname string, fatbins ...[]byte) (string, error) {
	if _, err := BuildSharedObject(ctx, cacheDir, arch, soname); err != nil {
		return "", err // the soname's check and the compiler's
	}
	return buildShared(ctx, cacheDir, arch, soname, append([]byte(emptySource), fatbinSource(fatbins)...), nil)
}

// buildKernelObject compiles an object file whose .nv_fatbin holds one fat
// binary per module, to link into a router template.
func buildKernelObject(ctx context.Context, cacheDir string, arch Arch, modules [][]byte) (string, error) {
	args := []string{"-c", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror"}
	return buildC(ctx, cacheDir, arch, "kernels.o", fatbinSource(modules), args)
}

// routerKernels are the fat binaries a router template of kind holds for
// CUDA release cuda: with static linking, those of the CUDA static
// libraries cudarc links (cuBLAS, cuBLASLt, cuRAND: every SM of the
// release); with flash attention, and with dynamic linking (which TEI's
// CUDA images build with candle-cuda's flash attention too),
// candle-flash-attn's, written for tei.PlaceholderSM until the stand-in
// cargo writes the build's SM in. A router without CUDA holds none.
func routerKernels(cuda string, kind tei.TemplateKind) ([][]byte, error) {
	var out [][]byte
	if kind.FlashAttn || kind.Linking == tei.LinkDynamic {
		out = append(out, fatbintest.Fatbin(tei.FlashKernels(tei.PlaceholderSM())...))
	}
	if kind.Linking == tei.LinkStatic {
		lib, err := LibraryKernels(cuda)
		if err != nil {
			return nil, err
		}
		m := fatbintest.Fatbin(lib...)
		out = append(out, m, m, m)
	}
	return out, nil
}
