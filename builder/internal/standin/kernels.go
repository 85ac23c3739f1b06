package standin

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
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

// fatbinSource is C that puts the fat binaries of modules, back to back,
// in a .nv_fatbin section, 8-aligned as nvcc's host objects have it;
// `used` keeps it through the link although nothing refers to it.
func fatbinSource(modules [][]fatbintest.Code) []byte {
	var data bytes.Buffer
	for _, m := range modules {
		_ = fatbintest.WriteFatbin(&data, m...)
	}
	var b strings.Builder
	b.WriteString("__attribute__((section(\".nv_fatbin\"), aligned(8), used))\nstatic const unsigned char jetbake_standin_fatbin[] = {")
	for i, c := range data.Bytes() {
		if i%16 == 0 {
			b.WriteString("\n\t")
		}
		fmt.Fprintf(&b, "0x%02x,", c)
	}
	b.WriteString("\n};\n")
	return []byte(b.String())
}

// BuildCUDALibrary compiles a shared object with soname whose .nv_fatbin
// holds one fat binary per module, for arch into cacheDir, and returns its path.
func BuildCUDALibrary(ctx context.Context, cacheDir string, arch Arch, soname string, modules ...[]fatbintest.Code) (string, error) {
	if _, err := BuildSharedObject(ctx, cacheDir, arch, soname); err != nil {
		return "", err // the soname's check and the compiler's
	}
	return buildShared(ctx, cacheDir, arch, soname, append([]byte(emptySource), fatbinSource(modules)...), nil)
}

// buildKernelObject compiles an object file whose .nv_fatbin holds one fat
// binary per module, to link into a router template.
func buildKernelObject(ctx context.Context, cacheDir string, arch Arch, modules [][]fatbintest.Code) (string, error) {
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
func routerKernels(cuda string, kind tei.TemplateKind) ([][]fatbintest.Code, error) {
	var out [][]fatbintest.Code
	if kind.FlashAttn || kind.Linking == tei.LinkDynamic {
		out = append(out, tei.FlashKernels(tei.PlaceholderSM()))
	}
	if kind.Linking == tei.LinkStatic {
		lib, err := LibraryKernels(cuda)
		if err != nil {
			return nil, err
		}
		out = append(out, lib, lib, lib)
	}
	return out, nil
}
