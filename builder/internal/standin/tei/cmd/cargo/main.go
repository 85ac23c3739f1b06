// Command cargo is the stand-in cargo of jetbake's stand-in build images:
// a static linux/arm64 program that the stand-in rustup installer puts in
// $CARGO_HOME/bin. `cargo build` applies TEI's build contract (package tei)
// to the source in the working folder and writes target/release/NAME, a
// prebuilt router template of the resulting linking mode with the build's
// facts appended; it fails in cargo's words where the real build would.
// Before that it compiles the build's crates (tei.Units) one rustc
// invocation each, through RUSTC_WRAPPER when it is set, as cargo does, so
// that the stand-in sccache sees every crate. `cargo install sccache`
// installs the stand-in sccache, with the features asked for; other
// crates fail as they would offline. Installed as rustc (rustup's proxies
// are one program too), it is the stand-in rustc: see tei.CompileRustc.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/builder/internal/standin/tei/sccache"
)

// version is what `cargo --version` prints.
const version = "cargo 1.92.0 (jetbake stand-in)"

func main() {
	if filepath.Base(os.Args[0]) == "rustc" {
		os.Exit(rustc(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// rustc is the stand-in rustc (see tei.RunRustc).
func rustc(args []string, stdout, stderr io.Writer) int {
	dir, err := os.Getwd()
	if err != nil {
		return fail(stderr, err)
	}
	return tei.RunRustc(args, dir, os.LookupEnv, stdout, stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	h := tei.Host{Env: os.LookupEnv, LookPath: exec.LookPath, CPU: hostCPU(), Arch: runtime.GOARCH,
		Output: func(name string, args ...string) ([]byte, error) { return exec.Command(name, args...).Output() },
		Run: func(dir, name string, args ...string) ([]byte, error) {
			cmd := exec.Command(name, args...)
			cmd.Dir = dir
			return cmd.CombinedOutput()
		}}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "Rust's package manager (jetbake stand-in)\n\nUsage: cargo [OPTIONS] [COMMAND]")
		return 0
	}
	dir, err := os.Getwd()
	if err != nil {
		return fail(stderr, err)
	}
	// rustup's proxy picks the toolchain before cargo runs at all.
	toolchain, err := tei.Toolchain(dir, h)
	if err != nil {
		fmt.Fprintln(stderr, "error: "+err.Error())
		return 1
	}
	switch args[0] {
	case "--version", "-V", "version":
		fmt.Fprintln(stdout, version)
		return 0
	case "build", "b":
		return build(dir, toolchain, args[1:], h, stderr)
	case "install":
		return install(args[1:], h, stderr)
	}
	fmt.Fprintf(stderr, "error: no such command: `%s`\n", args[0])
	return 101
}

// fail prints err as cargo prints errors and returns cargo's status.
func fail(stderr io.Writer, err error) int {
	var usage *tei.UsageError
	if errors.As(err, &usage) {
		fmt.Fprintln(stderr, usage.Msg)
		return 1
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "error: ") {
		msg = "error: " + msg
	}
	fmt.Fprintln(stderr, msg)
	return 101
}

// build is `cargo build`.
func build(dir, toolchain string, args []string, h tei.Host, stderr io.Writer) int {
	start := time.Now()
	parsed, err := tei.ParseBuildArgs(args)
	if err != nil {
		return fail(stderr, err)
	}
	rc := rustcCommand()
	if out, err := rc.run(dir, nil, probeArgs...); err != nil {
		return fail(stderr, fmt.Errorf("failed to run `rustc` to learn about target-specific information\n\nCaused by:\n  %s", processError(rc, probeArgs, err, out)))
	}
	p, err := tei.Build(dir, parsed, h)
	if err != nil {
		return fail(stderr, err)
	}
	for _, w := range p.Warnings {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	p.Facts.Command = append([]string{"cargo", "build"}, args...)
	p.Facts.Toolchain = toolchain
	units, err := tei.Units(dir, parsed, h)
	if err != nil {
		return fail(stderr, err)
	}
	if err := compile(rc, dir, filepath.Join(filepath.Dir(p.Output), "deps"), parsed.Release, units, stderr); err != nil {
		return fail(stderr, err)
	}
	if err := write(p); err != nil {
		return fail(stderr, err)
	}
	profile := "`dev` profile [unoptimized + debuginfo]"
	if parsed.Release {
		profile = "`release` profile [optimized]"
	}
	fmt.Fprintf(stderr, "    Finished %s target(s) in %.2fs\n", profile, time.Since(start).Seconds())
	return 0
}

// probeArgs are what cargo first asks rustc (through the wrapper) to learn
// about the target.
var probeArgs = []string{"-", "--crate-name", "___", "--print=file-names", "--crate-type", "bin", "--crate-type", "rlib",
	"--print=sysroot", "--print=cfg"}

// rustcRunner runs rustc as cargo does: through RUSTC_WRAPPER when set.
type rustcRunner struct{ wrapper string }

func rustcCommand() rustcRunner {
	w, _ := os.LookupEnv("RUSTC_WRAPPER")
	return rustcRunner{wrapper: w}
}

// line is the command as cargo quotes it in its errors.
func (r rustcRunner) line(args []string) string {
	words := append([]string{"rustc"}, args...)
	if r.wrapper != "" {
		words = append([]string{r.wrapper}, words...)
	}
	return strings.Join(words, " ")
}

// run runs rustc with args in dir, with env added to the environment, and
// returns its standard error: the wrapper as a process of its own, with
// rustc as its first argument, as cargo runs it; without one, the stand-in
// rustc in this process (tei.RunRustc), which is what a rustc process of
// the stand-in images would run.
func (r rustcRunner) run(dir string, env map[string]string, args ...string) (string, error) {
	environ := os.Environ()
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	var errOut bytes.Buffer
	if r.wrapper == "" {
		if code := tei.RunRustc(args, dir, tei.EnvLookup(environ), io.Discard, &errOut); code != 0 {
			return errOut.String(), &rustcExit{code}
		}
		return errOut.String(), nil
	}
	cmd := exec.Command(r.wrapper, append([]string{"rustc"}, args...)...)
	cmd.Dir, cmd.Env = dir, environ
	cmd.Stdout, cmd.Stderr = io.Discard, &errOut
	err := cmd.Run()
	return errOut.String(), err
}

// rustcExit is the exit status of the stand-in rustc run in this process.
type rustcExit struct{ code int }

func (e *rustcExit) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// processError words a failed rustc run as cargo does.
func processError(r rustcRunner, args []string, err error, stderr string) string {
	var exit *exec.ExitError
	var inProcess *rustcExit
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case errors.As(err, &inProcess):
		code = inProcess.code
	default:
		return fmt.Sprintf("could not execute process `%s` (never executed)\n\nCaused by:\n  No such file or directory (os error 2)", r.line(args))
	}
	msg := fmt.Sprintf("process didn't exit successfully: `%s` (exit status: %d)", r.line(args), code)
	if s := strings.TrimRight(stderr, "\n"); s != "" {
		msg += "\n  --- stderr\n  " + strings.ReplaceAll(s, "\n", "\n  ")
	}
	return msg
}

// compile runs rustc for each unit, in order, with its outputs in deps,
// and prints cargo's "Compiling" line once per package.
func compile(r rustcRunner, dir, deps string, release bool, units []tei.Unit, stderr io.Writer) error {
	seen := map[string]bool{}
	for _, u := range units {
		if !seen[u.Package] {
			seen[u.Package] = true
			fmt.Fprintf(stderr, "   Compiling %s v%s (%s)\n", u.Package, u.Version, u.Dir)
		}
		args := u.RustcArgs(dir, deps, release, units)
		if out, err := r.run(dir, u.Env, args...); err != nil {
			return fmt.Errorf("could not compile `%s` (%s)\n\nCaused by:\n  %s", u.Package, u.Kind, processError(r, args, err, out))
		}
	}
	return nil
}

// write puts the template of p's linking mode, with p's facts, at p.Output.
func write(p *tei.BuildPlan) error {
	tmpl := tei.TemplatePath(tei.Template(p.Facts.Linking, p.Facts.FlashAttn))
	template, err := os.ReadFile(tmpl)
	if err != nil {
		return fmt.Errorf("this build image has no stand-in router for %s (%s): %w", orCPU(p.Facts.Linking), tmpl, err)
	}
	if p.Facts.ComputeCap > 0 {
		// candle-flash-attn's kernels, compiled for CUDA_COMPUTE_CAP: what
		// the link took from the archive nvcc made, when the build compiled
		// real device code; else NVIDIA's real fat binary where the image
		// has one for the SM.
		real := p.Kernels
		if real == nil {
			var err error
			real, err = os.ReadFile(tei.FlashFatbinPath(p.Facts.ComputeCap))
			if errors.Is(err, fs.ErrNotExist) {
				real, err = nil, nil
			}
			if err != nil {
				return err
			}
		}
		if _, err := tei.SetKernels(template, p.Facts.ComputeCap, real); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := tei.AppendFacts(&buf, template, p.Facts); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.Output), 0o755); err != nil {
		return err
	}
	tmp := p.Output + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, p.Output)
}

func orCPU(linking string) string {
	if linking == "" {
		return "a router without CUDA"
	}
	return linking
}

// install is `cargo install`: the stand-in images carry sccache, which it
// installs with the features the command line resolves to (sccache's
// default is all its backends; --no-default-features drops them) compiled
// in; any other crate would need crates.io, which a build without network
// cannot reach.
func install(args []string, h tei.Host, stderr io.Writer) int {
	crate, ver, root := "", "", ""
	var requested []string
	noDefault := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--version" || a == "--root" || a == "-F" || a == "--features" || a == "-j":
			if i+1 >= len(args) {
				return fail(stderr, &tei.UsageError{Msg: "error: a value is required for '" + a + "' but none was supplied"})
			}
			i++
			switch a {
			case "--version":
				ver = args[i]
			case "--root":
				root = args[i]
			case "-F", "--features":
				requested = append(requested, tei.SplitFeatures(args[i])...)
			}
		case strings.HasPrefix(a, "--version="):
			ver = strings.TrimPrefix(a, "--version=")
		case strings.HasPrefix(a, "--features="):
			requested = append(requested, tei.SplitFeatures(strings.TrimPrefix(a, "--features="))...)
		case a == "--no-default-features":
			noDefault = true
		case strings.HasPrefix(a, "-"):
		default:
			crate = a
		}
	}
	if crate != "sccache" {
		fmt.Fprintln(stderr, "    Updating crates.io index")
		return fail(stderr, errors.New("download of config.json failed\n\nCaused by:\n  [6] Couldn't resolve host name (Could not resolve host: index.crates.io)"))
	}
	if ver == "" {
		ver = "0.10.0"
	}
	if root == "" {
		root = cargoHome(h)
	}
	feats, err := sccache.ResolveFeatures(ver, requested, noDefault)
	if err != nil {
		return fail(stderr, err)
	}
	program, err := os.ReadFile(filepath.Join(tei.StandinDir, "cargo", "sccache"))
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "  Installing sccache v%s\n", ver)
	var bin bytes.Buffer
	if err := sccache.Install(&bin, program, sccache.Build{Version: ver, Features: feats}); err != nil {
		return fail(stderr, err)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return fail(stderr, err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "sccache"), bin.Bytes(), 0o755); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "   Installed package `sccache v%s` (executable `sccache`)\n", ver)
	return 0
}

func cargoHome(h tei.Host) string {
	if v, ok := h.Env("CARGO_HOME"); ok && v != "" {
		return v
	}
	home, _ := h.Env("HOME")
	return filepath.Join(home, ".cargo")
}

// hostCPU is the building CPU's features, from the auxiliary vector
// (QEMU's emulated CPU under emulation).
func hostCPU() []string {
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return nil
	}
	return tei.FeaturesFromAuxv(auxv)
}
