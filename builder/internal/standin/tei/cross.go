package tei

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
)

// The cross contract of TEI's build on an x86_64 machine, as the real
// tools keep it:
//
//   - cargo builds for the host unless told --target (or CARGO_BUILD_TARGET);
//     with one, its output goes to TARGET_DIR/TRIPLE/PROFILE/BIN
//     (https://doc.rust-lang.org/cargo/reference/build-cache.html);
//   - rustc links through the target's linker, which cargo takes from
//     CARGO_TARGET_<TRIPLE>_LINKER, else `cc`, the host's compiler
//     (https://doc.rust-lang.org/cargo/reference/config.html#targettriplelinker);
//   - candle-flash-attn's build script (candle 6381023, the revision TEI
//     v1.8.0 to v1.9.3 pin) compiles its kernels with bindgen_cuda 0.1.5's
//     build_lib: one `nvcc --gpu-architecture=sm_XX -c -o OUT_DIR/NAME-HASH.o
//     --default-stream per-thread ARGS [-allow-unsupported-compiler -ccbin
//     $NVCC_CCBIN] FILE.cu` per kernel (github.com/Narsil/bindgen_cuda,
//     src/lib.rs), so nvcc's host compiler is NVCC_CCBIN's, else nvcc's
//     default, gcc; nvcc takes the CUDA target folder (targets/aarch64-linux,
//     targets/sbsa-linux) from --target-directory, which a build passes
//     through NVCC_APPEND_FLAGS since bindgen_cuda has no option for it;
//   - the host objects go into the router's link: an object of another
//     architecture fails it, in ld's words ("Relocations in generic ELF
//     (EM: 62)", "error adding symbols: file in wrong format").
//
// The stand-in runs the real programs for the last three: the stand-in
// nvcc compiles its host object with the host compiler it was given (the
// real aarch64-linux-gnu-gcc in a cross build base), and the link runs the
// real linker on that object and on the stand-in of rustc's own output, an
// aarch64 object the build base ships (MainObjectPath).

// MainObjectPath is the stand-in of rustc's object code for the router in a
// stand-in build image: an aarch64 relocatable object, built with Debian's
// aarch64 cross compiler, that the link step hands the linker.
func MainObjectPath() string { return filepath.Join(StandinDir, "cargo", "router-main.o") }

// HostTriple is Rust's name of the building machine: the triple cargo
// builds for without --target. goarch is GOARCH's name ("" is arm64).
func HostTriple(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64-unknown-linux-gnu"
	case "", "arm64":
		return Triple
	}
	return goarch + "-unknown-linux-gnu"
}

// compileTarget is the triple cargo builds for: --target, else
// CARGO_BUILD_TARGET, else the host's. explicit says whether one was given
// (the output folder then has the triple in it).
func compileTarget(args BuildArgs, h Host) (triple string, explicit bool) {
	if args.Target != "" {
		return args.Target, true
	}
	if v := h.getenv("CARGO_BUILD_TARGET"); v != "" {
		return v, true
	}
	return HostTriple(h.Arch), false
}

// checkTarget refuses a build for anything but the Jetson's triple: the
// stand-in router is an aarch64 ELF. A real cargo on an x86_64 machine
// without --target builds an x86_64 router, which no Jetson runs.
func checkTarget(triple string, h Host) error {
	if triple == Triple {
		return nil
	}
	return fmt.Errorf("the jetbake stand-in cargo builds TEI's router for %s only, not %s: on this %s machine pass --target %s "+
		"(a real cargo would build a router for %s here, which no Jetson runs)", Triple, triple, HostTriple(h.Arch), Triple, strings.SplitN(triple, "-", 2)[0])
}

// LinkerVar is the variable cargo reads the linker of triple from:
// CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER for aarch64-unknown-linux-gnu.
func LinkerVar(triple string) string {
	return "CARGO_TARGET_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(triple)) + "_LINKER"
}

// linkerFor is the program rustc links the target's binaries with.
func linkerFor(triple string, h Host) string {
	if v := h.getenv(LinkerVar(triple)); v != "" {
		return v
	}
	return "cc"
}

// flashAttnKernels are the kernel files the stand-in compiles for
// candle-flash-attn: one, for time (the real build.rs lists 53); each is
// one nvcc run, as in bindgen_cuda.
var flashAttnKernels = []string{"kernels/flash_api.cu"}

// buildFlashAttnObjects is candle-flash-attn's build script: bindgen_cuda's
// build_lib compiling each kernel into OUT_DIR. It returns the objects.
// Without h.Run (the rule tests), nothing runs.
func buildFlashAttnObjects(workspace string, p *BuildPlan, h Host) ([]string, error) {
	if h.Run == nil {
		return nil, nil
	}
	crate, checkout := lockedCrate(workspace, "candle-flash-attn")
	outDir := filepath.Join(filepath.Dir(p.Output), "build", checkout+"-2b7d0e", "out")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	var objects []string
	for _, k := range flashAttnKernels {
		sum := fnv.New64a()
		sum.Write([]byte(k))
		obj := filepath.Join(outDir, fmt.Sprintf("%s-%x.o", strings.TrimSuffix(filepath.Base(k), ".cu"), sum.Sum64()))
		args := []string{fmt.Sprintf("--gpu-architecture=sm_%d", p.Facts.ComputeCap), "-c", "-o", obj, "--default-stream", "per-thread",
			"-std=c++17", "-O3", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
			"-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "-Icutlass/include", "--expt-relaxed-constexpr", "--expt-extended-lambda",
			"--use_fast_math", "--verbose", "-Xcompiler", "-fPIC"}
		if ccbin, ok := h.Env("NVCC_CCBIN"); ok {
			args = append(args, "-allow-unsupported-compiler", "-ccbin", ccbin)
		}
		args = append(args, k)
		out, err := h.Run("nvcc", args...)
		if err != nil {
			return nil, &BuildScriptError{Crate: crate,
				Script:  filepath.Join(filepath.Dir(p.Output), "build", checkout+"-2b7d0e", "build-script-build"),
				Source:  "$CARGO_HOME/registry/src/index.crates.io-1949cf8c6b5b557f/bindgen_cuda-0.1.5/src/lib.rs:262:21",
				Message: fmt.Sprintf("nvcc error while executing compiling: \"nvcc\" %s\n\n# stdout\n\n\n# stderr\n%s", quoteArgs(args), out)}
		}
		// The stand-in build images' gcc (tool.sh) writes nothing: a
		// native stand-in build has no host object to link.
		if _, err := os.Stat(obj); err == nil {
			objects = append(objects, obj)
		}
	}
	return objects, nil
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, " ")
}

// runLink runs the target's linker on rustc's stand-in object and the host
// objects, with libArgs (the system libraries of rustc's link line), as a shared object without the C library's start files (the
// stand-in checks that the objects link together, not a program's
// layout), and words its failure as rustc does. Without h.Run or any
// object, nothing runs.
func runLink(linker string, objects, libArgs []string, p *BuildPlan, h Host) error {
	if main := h.path(MainObjectPath()); h.exists(MainObjectPath()) {
		objects = append([]string{main}, objects...)
	}
	if h.Run == nil || len(objects) == 0 {
		return nil
	}
	deps := filepath.Join(filepath.Dir(p.Output), "deps")
	if err := os.MkdirAll(deps, 0o755); err != nil {
		return err
	}
	out := filepath.Join(deps, "text_embeddings_router-link-check.so")
	defer os.Remove(out)
	args := append(append([]string{"-shared", "-nostdlib", "-o", out}, objects...), libArgs...)
	msg, err := h.Run(linker, args...)
	if err == nil {
		return nil
	}
	note := strings.ReplaceAll(strings.TrimRight(string(msg), "\n"), "\n", "\n          ")
	return &CompileError{Crate: p.Facts.Package, Kind: fmt.Sprintf("bin %q", p.Facts.Bin),
		Message: fmt.Sprintf("error: linking with `%s` failed: %v\n  |\n  = note: %s", linker, exitStatus(err), note)}
}

// exitStatus words a failed run as rustc does: "exit status: 1".
func exitStatus(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, "exit status "); ok {
		return "exit status: " + rest
	}
	return s
}
