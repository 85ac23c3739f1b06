package tei

import (
	"fmt"
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
//   - candle-flash-attn's build script compiles its kernels with
//     bindgen_cuda 0.1.5's build_lib (flashbuild.go), so nvcc's host
//     compiler is NVCC_CCBIN's, else nvcc's default, gcc; nvcc takes the
//     CUDA target folder (targets/aarch64-linux, targets/sbsa-linux) from
//     --target-directory, which a build passes through NVCC_APPEND_FLAGS
//     since bindgen_cuda has no option for it, and archives the objects
//     with the archiver of its default host compiler (nvcc --lib);
//   - the archive goes into the router's link: a member of another
//     architecture fails it, in ld's words ("skipping incompatible
//     .../libflashattention.a when searching for -lflashattention").
//
// The stand-in runs the real programs for the last three: nvcc (NVIDIA's
// own in the cross build bases of Tegra releases, else a stand-in that
// compiles a host object through the host compiler it was given, the real
// aarch64-linux-gnu-gcc in a cross build base), and the link runs the
// real linker on the archive and on the stand-in of rustc's own output, an
// aarch64 object the build base ships (MainObjectPath) that calls the
// crate's entry point, run_mha, as candle-flash-attn's Rust code does.

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

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, " ")
}

// runLink runs the target's linker on rustc's stand-in object, with
// libArgs (the libraries of rustc's link line: the kernels' archive, the
// system's), as a shared object without the C library's start files (the
// stand-in checks that the objects link together, not a program's
// layout), and words its failure as rustc does. It returns the fat
// binaries the link took (linkedKernels). Without h.Run or rustc's
// object, nothing runs.
func runLink(linker string, libArgs []string, p *BuildPlan, h Host) ([]byte, error) {
	if h.Run == nil || !h.exists(MainObjectPath()) {
		return nil, nil
	}
	deps := filepath.Join(filepath.Dir(p.Output), "deps")
	if err := os.MkdirAll(deps, 0o755); err != nil {
		return nil, err
	}
	out := filepath.Join(deps, "text_embeddings_router-link-check.so")
	defer os.Remove(out)
	args := append([]string{"-shared", "-nostdlib", "-o", out, h.path(MainObjectPath())}, libArgs...)
	msg, err := h.Run("", linker, args...)
	if err != nil {
		note := strings.ReplaceAll(strings.TrimRight(string(msg), "\n"), "\n", "\n          ")
		return nil, &CompileError{Crate: p.Facts.Package, Kind: fmt.Sprintf("bin %q", p.Facts.Bin),
			Message: fmt.Sprintf("error: linking with `%s` failed: %v\n  |\n  = note: %s", linker, exitStatus(err), note)}
	}
	// The stand-in build images' cc (tool.sh) writes nothing.
	if _, err := os.Stat(out); err != nil {
		return nil, nil
	}
	return linkedKernels(out)
}

// exitStatus words a failed run as rustc does: "exit status: 1".
func exitStatus(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, "exit status "); ok {
		return "exit status: " + rest
	}
	return s
}
