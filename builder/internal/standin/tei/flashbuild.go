package tei

import (
	"bytes"
	"debug/elf"
	goembed "embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// candle-flash-attn's build script as the stand-in runs it. The crate's
// source is the stand-in's own (flashattn-src: a few small kernels written
// for the test bed, not candle's), which the stand-in cargo puts where
// cargo checks out the crate's git source; its build script compiles it as
// candle's does (candle 6381023, which TEI v1.8.0 to v1.9.3 pin), through
// bindgen_cuda 0.1.5's build_lib (github.com/Narsil/bindgen_cuda, commit
// a6b0c89, src/lib.rs:189-295):
//
//   - one nvcc run a kernel file, in the crate's folder:
//     nvcc --gpu-architecture=sm_XX -c -o OUT_DIR/STEM-HASH.o --default-stream
//     per-thread EXTRA_ARGS [-allow-unsupported-compiler -ccbin $NVCC_CCBIN]
//     kernels/FILE.cu, with candle-flash-attn's extra arguments
//     (flashAttnArgs); nvcc's own messages go to the build script's output,
//     and the panic's "# stdout"/"# stderr" sections stay empty, since
//     bindgen_cuda does not capture them;
//   - then the archive: nvcc --lib -o OUT_DIR/libflashattention.a OBJECTS,
//     without -ccbin (nvcc asks its default host compiler, gcc, for its
//     archiver, unless NVCC_PREPEND_FLAGS names another);
//   - build.rs then prints cargo:rustc-link-search=OUT_DIR,
//     cargo:rustc-link-lib=flashattention, dylib=cudart and dylib=stdc++.
//
// With NVIDIA's real nvcc in the build image (the stand-in cross build
// bases of Tegra releases), the kernels are real device code and the
// router's .nv_fatbin is what nvcc and the linker left (Kernels).

// flashAttnSource is the stand-in candle-flash-attn's source.
//
//go:embed flashattn-src
var flashAttnSource goembed.FS

// flashAttnKernels are the kernel files its build.rs lists, entry point
// first, as candle's does; each is one nvcc run.
var flashAttnKernels = []string{"kernels/flash_api.cu", "kernels/pooling.cu"}

// flashAttnArgs are candle-flash-attn's extra nvcc arguments (its build.rs
// at candle 6381023, off MSVC).
var flashAttnArgs = []string{"-std=c++17", "-O3", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
	"-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "-Icutlass/include", "--expt-relaxed-constexpr",
	"--expt-extended-lambda", "--use_fast_math", "--verbose", "-Xcompiler", "-fPIC"}

// FlashAttnLib is the archive candle-flash-attn's build script writes and
// the router links (-lflashattention).
const FlashAttnLib = "flashattention"

// flashAttnBuild is what candle-flash-attn's build script left: the
// folder it told rustc to search and whether the archive is there.
type flashAttnBuild struct {
	// OutDir is OUT_DIR, where the objects and the archive are.
	OutDir string
	// Archive says whether libflashattention.a was written (the stand-in
	// build images' gcc, tool.sh, writes no object, so there is nothing to
	// archive).
	Archive bool
}

// linkArgs are rustc's link arguments from the build script's
// cargo:rustc-link-* lines that the link check uses: the archive.
func (b flashAttnBuild) linkArgs() []string {
	if !b.Archive {
		return nil
	}
	return []string{"-L", b.OutDir, "-l" + FlashAttnLib}
}

// buildFlashAttn is candle-flash-attn's build script. Without h.Run (the
// rule tests), nothing runs.
func buildFlashAttn(workspace string, p *BuildPlan, h Host) (flashAttnBuild, error) {
	if h.Run == nil {
		return flashAttnBuild{}, nil
	}
	crate, checkout := lockedCrate(workspace, "candle-flash-attn")
	scriptDir := filepath.Join(filepath.Dir(p.Output), "build", checkout+"-2b7d0e")
	b := flashAttnBuild{OutDir: filepath.Join(scriptDir, "out")}
	crateDir, err := checkOutFlashAttn(checkout, h)
	if err != nil {
		return b, err
	}
	if err := os.MkdirAll(b.OutDir, 0o755); err != nil {
		return b, err
	}
	panicAt := func(thread, line, msg, output string) error {
		return &BuildScriptError{Crate: crate, Script: filepath.Join(scriptDir, "build-script-build"), Thread: thread, Output: output,
			Source: "$CARGO_HOME/registry/src/index.crates.io-1949cf8c6b5b557f/bindgen_cuda-0.1.5/src/lib.rs:" + line, Message: msg}
	}
	var objects []string
	for _, k := range flashAttnKernels {
		sum := fnv.New64a()
		sum.Write([]byte(k))
		obj := filepath.Join(b.OutDir, fmt.Sprintf("%s-%x.o", strings.TrimSuffix(filepath.Base(k), ".cu"), sum.Sum64()))
		args := append([]string{fmt.Sprintf("--gpu-architecture=sm_%d", p.Facts.ComputeCap), "-c", "-o", obj, "--default-stream", "per-thread"},
			flashAttnArgs...)
		if ccbin, ok := h.Env("NVCC_CCBIN"); ok {
			args = append(args, "-allow-unsupported-compiler", "-ccbin", ccbin)
		}
		args = append(args, k)
		// OUT_DIR may hold an object of an earlier build (cargo's target
		// folder is a cache mount shared by every build of the SM and
		// CUDA): nvcc writes the object anew, and a compile that writes
		// none (the stand-in build images' gcc) must leave none.
		if err := os.Remove(obj); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return b, err
		}
		if out, err := h.Run(crateDir, "nvcc", args...); err != nil {
			return b, panicAt("<unnamed>", "262:21", "nvcc error while executing compiling: "+rustCommand("nvcc", args)+"\n\n# stdout\n\n\n# stderr\n", string(out))
		}
		// The stand-in build images' gcc (tool.sh) writes nothing: a
		// native stand-in build has no host object to link.
		if _, err := os.Stat(obj); err == nil {
			objects = append(objects, obj)
		}
	}
	if len(objects) == 0 {
		return b, nil
	}
	args := append([]string{"--lib", "-o", filepath.Join(b.OutDir, "lib"+FlashAttnLib+".a")}, objects...)
	if out, err := h.Run(crateDir, "nvcc", args...); err != nil {
		return b, panicAt("main", "287:13", "nvcc error while linking: "+rustCommand("nvcc", args)+"\n\n# stdout\n\n\n# stderr\n", string(out))
	}
	b.Archive = true
	return b, nil
}

// checkOutFlashAttn writes the stand-in crate's source where cargo checks
// out candle's git source, $CARGO_HOME/git/checkouts/CHECKOUT/candle-flash-attn,
// and returns that folder (its path in the image).
func checkOutFlashAttn(checkout string, h Host) (string, error) {
	home := h.getenv("CARGO_HOME")
	if home == "" {
		home = filepath.Join(h.getenv("HOME"), ".cargo")
	}
	dir := filepath.Join(home, "git", "checkouts", checkout, "candle-flash-attn")
	src, err := fs.Sub(flashAttnSource, "flashattn-src")
	if err != nil {
		return "", err
	}
	err = fs.WalkDir(src, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, name)
		if err != nil {
			return err
		}
		return writeIfChanged(h.path(filepath.Join(dir, name)), data)
	})
	if err != nil {
		return "", fmt.Errorf("check out candle-flash-attn's source: %w", err)
	}
	return dir, nil
}

// writeIfChanged writes data at path through a temporary file, unless the
// file holds it already (a checkout that cargo keeps in its cache mount is
// shared by the builds of every release).
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// rustCommand is a command as Rust's Debug of std::process::Command prints
// it, which bindgen_cuda's panics quote: "nvcc" "--lib" "-o" ...
func rustCommand(name string, args []string) string {
	return quoteArgs(append([]string{name}, args...))
}

// linkedKernels is the .nv_fatbin section of a linked file: the fat
// binaries of the objects the linker took, back to back as it left them;
// nil when it has none.
func linkedKernels(path string) ([]byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := f.Section(".nv_fatbin")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 {
		return nil, nil
	}
	return s.Data()
}
