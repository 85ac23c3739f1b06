package tei

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Host is the system the stand-in cargo builds on: the files of the build
// image under Root ("/" in the image, a folder in tests), the environment,
// programs on PATH and the building CPU.
type Host struct {
	// Root is prepended to the system paths the build looks at
	// (/usr/lib/aarch64-linux-gnu, /usr/local/cuda, ...); "" is "/".
	Root string
	// Env reads the environment.
	Env Env
	// LookPath finds a program on PATH (exec.LookPath in the program).
	LookPath func(string) (string, error)
	// Output runs a program found on PATH and returns its standard
	// output (exec.Command(...).Output() in the program).
	Output func(name string, args ...string) ([]byte, error)
	// CPU is the building CPU's features (from the auxiliary vector).
	CPU []string
	// Arch is the building machine's GOARCH ("amd64", "arm64"; "" is
	// arm64): cargo builds for it without --target.
	Arch string
	// Run runs a program found on PATH (or at a path) in dir ("" is the
	// working folder; a path in the image, under Root) and returns its
	// standard output and error together: nvcc for candle-flash-attn's
	// kernels and the target's linker. Nil runs neither.
	Run func(dir, name string, args ...string) ([]byte, error)
}

func (h Host) path(p string) string { return filepath.Join(h.Root, p) }

func (h Host) exists(p string) bool {
	_, err := os.Stat(h.path(p))
	return err == nil
}

func (h Host) getenv(k string) string {
	v, _ := h.Env(k)
	return v
}

// BuildPlan is what `cargo build` would produce.
type BuildPlan struct {
	// Facts are what the binary has compiled in.
	Facts BuildFacts
	// Output is the binary's path: TARGET/release/NAME.
	Output string
	// Package is "text-embeddings-router v1.9.3 (/src/router)", as cargo
	// prints it while compiling.
	Package string
	// Warnings are what rustc and cargo warn about.
	Warnings []string
	// Kernels are the fat binaries the router's link took from the
	// kernels' archive (its .nv_fatbin), when the build compiled real
	// device code; nil otherwise.
	Kernels []byte
}

// CompileError is rustc's refusal to compile a crate, in cargo's shape.
type CompileError struct {
	// Crate and Kind name the crate: "text-embeddings-backend-candle", "lib".
	Crate, Kind string
	// Message is rustc's error.
	Message string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s\n\nerror: could not compile `%s` (%s) due to 1 previous error", e.Message, e.Crate, e.Kind)
}

// Build works out what `cargo build ARGS` in dir does on TEI's source, or
// fails as cargo would: an unknown --bin or feature, a build script's panic
// (cudarc without a linking mode, openssl-sys without OpenSSL), a
// compile error (the candle backend without CUDA_COMPUTE_CAP) or a link
// error (a library the build image lacks).
func Build(dir string, args BuildArgs, h Host) (*BuildPlan, error) {
	ws, pkg, res, err := selected(dir, args)
	if err != nil {
		return nil, err
	}
	version := pkg.VersionIn(ws)
	p := &BuildPlan{Package: fmt.Sprintf("%s v%s (%s)", pkg.Package.Name, version, filepath.Dir(pkg.Path))}
	target, explicit := compileTarget(args, h)
	if err := checkTarget(target, h); err != nil {
		return nil, err
	}
	if target != HostTriple(h.Arch) {
		if err := targetInstalled(dir, target, h); err != nil {
			return nil, err
		}
	}
	if !explicit {
		target = ""
	}
	p.Output = outputPath(dir, ws, args, target, h)
	f := &p.Facts
	f.Package, f.Version, f.Bin, f.Features = pkg.Package.Name, version, args.Bin, res.Features
	f.Requested = slices.Clone(args.Features.Features)
	f.GitSHA = h.getenv("GIT_SHA")
	if err := checkOpenSSL(ws, p, h); err != nil {
		return nil, err
	}
	candle, candleFeatures, err := candleBackend(pkg, res)
	if err != nil {
		return nil, err
	}
	if res.DepEnabled(pkg, "cudarc") {
		if err := cudarcLinking(ws, p, res, h); err != nil {
			return nil, err
		}
	}
	var flash flashAttnBuild
	if candle != nil {
		if err := compileComputeCap(ws, candle, p, h); err != nil {
			return nil, err
		}
		if slices.Contains(candleFeatures, "flash-attn") {
			if flash, err = buildFlashAttn(filepath.Dir(ws.Path), p, h); err != nil {
				return nil, err
			}
			if err := compileFlashAttn(candle, p); err != nil {
				return nil, err
			}
		}
	}
	if err := rustflagsOf(dir, p, h); err != nil {
		return nil, err
	}
	p.Kernels, err = link(p, linkerFor(Triple, h), flash, h)
	return p, err
}

// selected reads the workspace in dir and returns its root, the member
// that builds --bin, and that member's features as the command line
// resolves them.
func selected(dir string, args BuildArgs) (*Manifest, *Manifest, Resolution, error) {
	ws, members, err := loadWorkspace(dir)
	if err != nil {
		return nil, nil, Resolution{}, err
	}
	pkg, err := selectBin(members, args.Bin)
	if err != nil {
		return nil, nil, Resolution{}, err
	}
	res, err := Resolve(pkg, args.Features)
	return ws, pkg, res, err
}

// loadWorkspace reads the workspace root in dir and its default members.
func loadWorkspace(dir string) (*Manifest, []*Manifest, error) {
	path := filepath.Join(dir, "Cargo.toml")
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("could not find `Cargo.toml` in `%s` or any parent directory", dir)
	}
	ws, err := ReadManifest(path)
	if err != nil {
		return nil, nil, err
	}
	if ws.Workspace == nil {
		return ws, []*Manifest{ws}, nil
	}
	names := ws.Workspace.DefaultMembers
	if len(names) == 0 {
		names = ws.Workspace.Members
	}
	var members []*Manifest
	for _, n := range names {
		m, err := ReadManifest(filepath.Join(dir, n, "Cargo.toml"))
		if err != nil {
			return nil, nil, fmt.Errorf("failed to load manifest for workspace member `%s`\n\nCaused by:\n  %w", filepath.Join(dir, n), err)
		}
		members = append(members, m)
	}
	return ws, members, nil
}

// selectBin finds the member that builds bin.
func selectBin(members []*Manifest, bin string) (*Manifest, error) {
	var all []string
	for _, m := range members {
		if bin != "" && m.HasBin(bin) {
			return m, nil
		}
		all = append(all, m.BinNames()...)
	}
	if bin == "" && len(all) == 1 {
		for _, m := range members {
			if len(m.BinNames()) == 1 {
				return m, nil
			}
		}
	}
	if bin == "" {
		return nil, errors.New("the stand-in cargo builds one binary: name it with --bin")
	}
	return nil, fmt.Errorf("no bin target named `%s` in default-run packages\n\nhelp: available bin targets:\n    %s", bin, strings.Join(all, "\n    "))
}

// outputPath is TARGET/[TRIPLE/]PROFILE/BIN, TARGET being --target-dir,
// CARGO_TARGET_DIR or the workspace's target folder, TRIPLE the --target
// given, if any.
func outputPath(dir string, ws *Manifest, args BuildArgs, triple string, h Host) string {
	target := filepath.Join(filepath.Dir(ws.Path), "target")
	if v := h.getenv("CARGO_TARGET_DIR"); v != "" {
		target = v
	}
	if args.TargetDir != "" {
		target = args.TargetDir
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	profile := "debug"
	if args.Release {
		profile = "release"
	}
	return filepath.Join(target, triple, profile, args.Bin)
}

// candleBackend follows the router's features into the backend crates and
// returns the candle backend's manifest and enabled features when its CUDA
// code, and with it TEI's compute-cap gate, is compiled; nil otherwise.
func candleBackend(router *Manifest, res Resolution) (*Manifest, []string, error) {
	backends, bres, err := resolveDependency(router, res, "text-embeddings-backend")
	if err != nil || backends == nil {
		return nil, nil, err
	}
	candle, cres, err := resolveDependency(backends, bres, "text-embeddings-backend-candle")
	if err != nil || candle == nil {
		return nil, nil, err
	}
	if !slices.Contains(cres.Features, "cuda") {
		return nil, nil, nil
	}
	return candle, cres.Features, nil
}

// resolveDependency resolves the features of m's path dependency dep: those
// its entry asks for, those m's enabled features add, and its defaults
// unless default-features = false. It returns nil when dep is not built.
func resolveDependency(m *Manifest, res Resolution, dep string) (*Manifest, Resolution, error) {
	if !res.DepEnabled(m, dep) {
		return nil, Resolution{}, nil
	}
	spec, _ := m.Dependencies[dep].(map[string]any)
	rel, _ := spec["path"].(string)
	if rel == "" {
		return nil, Resolution{}, nil
	}
	dm, err := ReadManifest(filepath.Join(filepath.Dir(m.Path), rel, "Cargo.toml"))
	if err != nil {
		return nil, Resolution{}, err
	}
	req := FeatureRequest{Features: slices.Clone(res.DepFeatures[dep]), NoDefault: spec["default-features"] == false}
	if list, ok := spec["features"].([]any); ok {
		for _, f := range list {
			if s, ok := f.(string); ok {
				req.Features = append(req.Features, s)
			}
		}
	}
	dres, err := Resolve(dm, req)
	return dm, dres, err
}

// checkOpenSSL is openssl-sys's build script (reqwest's native TLS): it
// finds OpenSSL through pkg-config, else OPENSSL_DIR, and panics without.
func checkOpenSSL(ws *Manifest, p *BuildPlan, h Host) error {
	dir := h.getenv("OPENSSL_DIR")
	_, pkgConfig := h.LookPath("pkg-config")
	_, pcFound := pkgConfigLibDir(h, "openssl")
	found := (pkgConfig == nil && pcFound) ||
		(dir != "" && h.exists(filepath.Join(dir, "include", "openssl", "ssl.h")))
	if found {
		return nil
	}
	crate, checkout := lockedCrate(filepath.Dir(ws.Path), "openssl-sys")
	return &BuildScriptError{Crate: crate,
		Script: filepath.Join(filepath.Dir(p.Output), "build", checkout+"-0f0c1d", "build-script-main"),
		Source: "$CARGO_HOME/registry/src/index.crates.io-1949cf8c6b5b557f/" + checkout + "/build/find_normal.rs",
		Message: "\nCould not find directory of OpenSSL installation, and this `-sys` crate cannot\n" +
			"proceed without this knowledge. If OpenSSL is installed and this crate had\n" +
			"trouble finding it,  you can set the `OPENSSL_DIR` environment variable for the\n" +
			"compilation process.\n\nMake sure you also have the development packages of openssl installed.\n" +
			"For example, `libssl-dev` on Ubuntu or `openssl-devel` on Fedora."}
}

// cudarcLinking is cudarc's build script: it needs one linking mode, and
// for dynamic linking the CUDA toolkit's include/cuda.h.
func cudarcLinking(ws *Manifest, p *BuildPlan, res Resolution, h Host) error {
	crate, checkout := lockedCrate(filepath.Dir(ws.Path), "cudarc")
	panicAt := func(msg string) error {
		return &BuildScriptError{Crate: crate,
			Script: filepath.Join(filepath.Dir(p.Output), "build", checkout+"-5e1b3a", "build-script-build"),
			Source: "$CARGO_HOME/git/checkouts/" + checkout + "/build.rs", Message: msg}
	}
	mode, ok := linkingMode(res.DepFeatures["cudarc"])
	if !ok {
		return panicAt(noLinkingPanic)
	}
	p.Facts.Linking = mode
	if mode == LinkDynamic {
		if _, ok := cudaRoot(h); !ok {
			return panicAt(fmt.Sprintf("Unable to find `include/cuda.h` under any of: %q. Set the `CUDA_ROOT` environment variable to `$CUDA_ROOT/include/cuda.h` to override path.", cudaRootCandidates(h)))
		}
	}
	return nil
}

// cudaRootCandidates are the folders cudarc's build script looks for the
// CUDA toolkit in: CUDA_ROOT, CUDA_PATH, CUDA_TOOLKIT_ROOT_DIR, then the
// usual places.
func cudaRootCandidates(h Host) []string {
	var out []string
	for _, k := range []string{"CUDA_ROOT", "CUDA_PATH", "CUDA_TOOLKIT_ROOT_DIR"} {
		if v := h.getenv(k); v != "" {
			out = append(out, v)
		}
	}
	return append(out, "/usr", "/usr/local/cuda", "/opt/cuda", "/usr/lib/cuda")
}

// cudaRoot is the first candidate with include/cuda.h.
func cudaRoot(h Host) (string, bool) {
	for _, c := range cudaRootCandidates(h) {
		if h.exists(filepath.Join(c, "include", "cuda.h")) {
			return c, true
		}
	}
	return "", false
}

// compileComputeCap is the candle backend: its build script reads
// CUDA_COMPUTE_CAP (else asks nvidia-smi, which a build image has no GPU
// for) and compute_cap.rs compiles it in with env!, so without a number
// the crate does not compile; candle's kernel crates check the number
// against nvcc first (bindgenCUDA). The match of compute_cap_matching
// becomes the router's gate.
func compileComputeCap(ws, candle *Manifest, p *BuildPlan, h Host) error {
	src := filepath.Join(filepath.Dir(candle.Path), "src", "compute_cap.rs")
	data, err := os.ReadFile(src)
	if err != nil {
		return &CompileError{Crate: candle.Package.Name, Kind: "lib", Message: fmt.Sprintf("error: couldn't read `%s`: %v", src, err)}
	}
	capValue, set := h.Env("CUDA_COMPUTE_CAP")
	cc, perr := strconv.Atoi(strings.TrimSpace(capValue))
	if !set || perr != nil || cc <= 0 {
		return &CompileError{Crate: candle.Package.Name, Kind: "lib", Message: "error: environment variable `CUDA_COMPUTE_CAP` not defined at compile time\n" +
			"  --> " + src + "\n   |\n   = help: use `std::env::var(\"CUDA_COMPUTE_CAP\")` to read the variable at run time\n" +
			"   = note: this error originates in the macro `env` (in Nightly builds, run with -Z macro-backtrace for more info)"}
	}
	if err := bindgenCUDA(filepath.Dir(ws.Path), p, h, cc); err != nil {
		return err
	}
	table, err := ParseComputeCapTable(string(data))
	if err != nil {
		return &CompileError{Crate: candle.Package.Name, Kind: "lib", Message: fmt.Sprintf("error: %s: %v (the stand-in cargo reads the arms of compute_cap_matching, one per line)", src, err)}
	}
	p.Facts.CUDA, p.Facts.ComputeCap, p.Facts.Table = true, cc, table
	return nil
}

// rustflagsOf records the rustflags in effect and what they tune for.
func rustflagsOf(dir string, p *BuildPlan, h Host) error {
	flags, err := Rustflags(dir, h.Env)
	if err != nil {
		return err
	}
	t := TargetCPU(flags.Args, h.CPU)
	p.Facts.Rustflags, p.Facts.RustflagsFrom = flags.Args, flags.From
	if p.Facts.Rustflags == nil {
		p.Facts.Rustflags = []string{}
	}
	p.Facts.TargetCPU, p.Facts.CPUFeatures = t.CPU, t.Features
	p.Warnings = append(p.Warnings, t.Warnings...)
	return nil
}
