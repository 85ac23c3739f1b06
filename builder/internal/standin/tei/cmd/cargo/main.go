// Command cargo is the stand-in cargo of jetbake's stand-in build images:
// a static linux/arm64 program that the stand-in rustup installer puts in
// $CARGO_HOME/bin. `cargo build` applies TEI's build contract (package tei)
// to the source in the working folder and writes target/release/NAME, a
// prebuilt router template of the resulting linking mode with the build's
// facts appended; it fails in cargo's words where the real build would.
// `cargo install sccache` installs the stand-in sccache; other crates
// fail as they would offline.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/internal/standin/tei"
)

// version is what `cargo --version` prints.
const version = "cargo 1.92.0 (jetbake stand-in)"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	h := tei.Host{Env: os.LookupEnv, LookPath: exec.LookPath, CPU: hostCPU()}
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
	if w, ok := os.LookupEnv("RUSTC_WRAPPER"); ok && w != "" {
		if _, err := exec.LookPath(w); err != nil {
			return fail(stderr, fmt.Errorf("failed to run `rustc` to learn about target-specific information\n\nCaused by:\n  could not execute process `%s rustc - --crate-name ___ --print=file-names` (never executed)\n\nCaused by:\n  No such file or directory (os error 2)", w))
		}
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
	fmt.Fprintf(stderr, "   Compiling %s\n", p.Package)
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

// write puts the template of p's linking mode, with p's facts, at p.Output.
func write(p *tei.BuildPlan) error {
	tmpl := tei.TemplatePath(tei.Template(p.Facts.Linking))
	template, err := os.ReadFile(tmpl)
	if err != nil {
		return fmt.Errorf("this build image has no stand-in router for %s (%s): %w", orCPU(p.Facts.Linking), tmpl, err)
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

// install is `cargo install`: the stand-in images carry sccache; any other
// crate would need crates.io, which a build without network cannot reach.
func install(args []string, h tei.Host, stderr io.Writer) int {
	crate, ver, root := "", "", ""
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
			}
		case strings.HasPrefix(a, "--version="):
			ver = strings.TrimPrefix(a, "--version=")
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
		ver = "0.8.2"
	}
	if root == "" {
		root = cargoHome(h)
	}
	data, err := os.ReadFile(filepath.Join(tei.StandinDir, "cargo", "sccache"))
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "  Installing sccache v%s\n", ver)
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return fail(stderr, err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "sccache"), data, 0o755); err != nil {
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
