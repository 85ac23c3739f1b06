package tei

import (
	"fmt"
	"path/filepath"
	"strings"
)

// linkLibs are what the router's link line names from the system besides
// the C library: OpenSSL's development links (libssl-dev) always, the
// driver's stub and CUDA's libraries for the CUDA backend. Static linking
// takes CUDA's static archives; dynamic linking their shared libraries.
func linkLibs(linking string, flashAttn bool) (system []string, cuda []string) {
	system = []string{"/usr/lib/aarch64-linux-gnu/libssl.so", "/usr/lib/aarch64-linux-gnu/libcrypto.so"}
	switch linking {
	case LinkStatic:
		cuda = []string{"stubs/libcuda.so", "libcudart_static.a", "libcublas_static.a", "libcublasLt_static.a", "libcurand_static.a", "libculibos.a"}
		if flashAttn {
			// candle-flash-attn's build script: cargo:rustc-link-lib=dylib=cudart.
			cuda = append(cuda, "libcudart.so")
		}
	case LinkDynamic:
		cuda = []string{"stubs/libcuda.so", "libcudart.so", "libcublas.so", "libcublasLt.so", "libcurand.so", "libnvrtc.so"}
	}
	return system, cuda
}

// link is rustc's final step, through the target's linker (see
// linkerFor), as it fails: no linker, a library the build image lacks, or
// an object the linker refuses (runLink).
func link(p *BuildPlan, linker string, hostObjects []string, h Host) error {
	if _, err := h.LookPath(linker); err != nil {
		return &CompileError{Crate: p.Facts.Package, Kind: fmt.Sprintf("bin %q", p.Facts.Bin),
			Message: "error: linker `" + linker + "` not found\n  |\n  = note: No such file or directory (os error 2)"}
	}
	system, cuda := linkLibs(p.Facts.Linking, p.Facts.FlashAttn)
	var missing []string
	for _, lib := range system {
		if !h.exists(lib) {
			missing = append(missing, lib)
		}
	}
	if len(cuda) > 0 {
		root, _ := cudaRoot(h)
		if root == "" {
			root = "/usr/local/cuda"
		}
		for _, lib := range cuda {
			if !h.exists(filepath.Join(root, "lib64", lib)) {
				missing = append(missing, lib)
			}
		}
	}
	if len(missing) == 0 {
		return runLink(linker, hostObjects, p, h)
	}
	var notes []string
	for _, lib := range missing {
		notes = append(notes, "/usr/bin/ld: cannot find -l"+libName(lib)+": No such file or directory")
	}
	notes = append(notes, "collect2: error: ld returned 1 exit status")
	return &CompileError{Crate: p.Facts.Package, Kind: fmt.Sprintf("bin %q", p.Facts.Bin),
		Message: "error: linking with `cc` failed: exit status: 1\n  |\n  = note: " + strings.Join(notes, "\n          ")}
}

// libName is the -l name of a library file: "cublas_static" of
// ".../libcublas_static.a".
func libName(file string) string {
	base := filepath.Base(file)
	base = strings.TrimPrefix(base, "lib")
	return strings.TrimSuffix(strings.TrimSuffix(base, ".a"), ".so")
}
