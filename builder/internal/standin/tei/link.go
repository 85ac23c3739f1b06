package tei

import (
	"fmt"
	"path/filepath"
	"strings"
)

// linkLibs are what the router's link line names from the system besides
// the C library: the driver's stub and CUDA's libraries for the CUDA
// backend (OpenSSL's come from opensslLink). Static linking takes CUDA's
// static archives; dynamic linking their shared libraries.
func linkLibs(linking string, flashAttn bool) (cuda []string) {
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
	return cuda
}

// opensslLibs are the libraries openssl-sys links, -lssl and -lcrypto.
var opensslLibs = []string{"ssl", "crypto"}

// opensslDir is the folder openssl-sys tells rustc to search for them
// (cargo:rustc-link-search=native=DIR): pkg-config's answer, else
// OPENSSL_DIR's lib, else the target's multiarch folder.
func opensslDir(h Host) string {
	if dir, ok := pkgConfigLibDir(h, "openssl"); ok {
		return dir
	}
	if dir := h.getenv("OPENSSL_DIR"); dir != "" {
		return filepath.Join(dir, "lib")
	}
	return "/usr/lib/aarch64-linux-gnu"
}

// link is rustc's final step, through the target's linker (see
// linkerFor), as it fails: no linker, a library the build image lacks, or
// an object the linker refuses (runLink). It returns the fat binaries the
// router took from the kernels' archive.
func link(p *BuildPlan, linker string, flash flashAttnBuild, h Host) ([]byte, error) {
	if _, err := h.LookPath(linker); err != nil {
		return nil, &CompileError{Crate: p.Facts.Package, Kind: fmt.Sprintf("bin %q", p.Facts.Bin),
			Message: "error: linker `" + linker + "` not found\n  |\n  = note: No such file or directory (os error 2)"}
	}
	cuda := linkLibs(p.Facts.Linking, p.Facts.FlashAttn)
	sslDir := opensslDir(h)
	var missing []string
	for _, lib := range opensslLibs {
		if !h.exists(filepath.Join(sslDir, "lib"+lib+".so")) {
			missing = append(missing, "lib"+lib+".so")
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
		// rustc's link line: the kernels' archive, then openssl-sys's
		// search folder and libraries.
		libArgs := append(flash.linkArgs(), "-L", h.path(sslDir))
		for _, lib := range opensslLibs {
			libArgs = append(libArgs, "-l"+lib)
		}
		return runLink(linker, libArgs, p, h)
	}
	var notes []string
	for _, lib := range missing {
		notes = append(notes, "/usr/bin/ld: cannot find -l"+libName(lib)+": No such file or directory")
	}
	notes = append(notes, "collect2: error: ld returned 1 exit status")
	return nil, &CompileError{Crate: p.Facts.Package, Kind: fmt.Sprintf("bin %q", p.Facts.Bin),
		Message: "error: linking with `cc` failed: exit status: 1\n  |\n  = note: " + strings.Join(notes, "\n          ")}
}

// libName is the -l name of a library file: "cublas_static" of
// ".../libcublas_static.a".
func libName(file string) string {
	base := filepath.Base(file)
	base = strings.TrimPrefix(base, "lib")
	return strings.TrimSuffix(strings.TrimSuffix(base, ".a"), ".so")
}
