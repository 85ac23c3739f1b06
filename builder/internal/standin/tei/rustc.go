package tei

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
)

// RustcVersion is what the stand-in `rustc -vV` prints first.
const RustcVersion = "rustc 1.92.0 (jetbake stand-in)"

// Rustc is a rustc command line as the stand-in rustc and sccache read it.
type Rustc struct {
	// Args are the arguments as given.
	Args []string
	// Crate is --crate-name; Types the --crate-type values.
	Crate string
	Types []string
	// Input is the crate root ("-" for standard input, "" for none).
	Input string
	// OutDir is --out-dir; Extra is -C extra-filename.
	OutDir, Extra string
	// Emit are the --emit kinds ("dep-info", "link", ...).
	Emit []string
	// Externs are the --extern NAME=PATH values, by name.
	Externs map[string]string
	// Prints are the --print values; Incremental is -C incremental.
	Prints      []string
	Incremental bool
}

// ParseRustc reads a rustc command line (the arguments after "rustc").
func ParseRustc(args []string) (Rustc, error) {
	r := Rustc{Args: slices.Clone(args), Externs: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, val, inline := strings.Cut(a, "=")
		takes := map[string]bool{"--crate-name": true, "--crate-type": true, "--out-dir": true, "--emit": true,
			"--extern": true, "--print": true, "-C": true, "--cfg": true, "-L": true, "--edition": true,
			"--error-format": true, "--target": true, "-o": true, "--cap-lints": true}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if r.Input != "" {
				return r, fmt.Errorf("multiple input filenames provided (first two filenames are `%s` and `%s`)", r.Input, a)
			}
			r.Input = a
			continue
		}
		if !takes[flag] {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return r, fmt.Errorf("Argument to option '%s' missing", strings.TrimLeft(flag, "-"))
			}
			i++
			val = args[i]
		}
		switch flag {
		case "--crate-name":
			r.Crate = val
		case "--crate-type":
			r.Types = append(r.Types, strings.Split(val, ",")...)
		case "--out-dir":
			r.OutDir = val
		case "--emit":
			r.Emit = append(r.Emit, strings.Split(val, ",")...)
		case "--extern":
			name, path, _ := strings.Cut(val, "=")
			r.Externs[name] = path
		case "--print":
			r.Prints = append(r.Prints, val)
		case "-C":
			switch k, v, _ := strings.Cut(val, "="); k {
			case "extra-filename":
				r.Extra = v
			case "incremental":
				r.Incremental = true
			}
		}
	}
	return r, nil
}

// Outputs are the files rustc writes for r, as paths under its --out-dir:
// the rlib of a library, the executable of a binary, and the dep-info file.
func (r Rustc) Outputs() []string {
	var out []string
	for _, t := range r.Types {
		switch t {
		case "lib", "rlib":
			out = append(out, "lib"+r.Crate+r.Extra+".rlib")
		case "bin":
			out = append(out, r.Crate+r.Extra)
		}
	}
	if slices.Contains(r.Emit, "dep-info") {
		out = append(out, r.Crate+r.Extra+".d")
	}
	return out
}

// envMacro matches env!("NAME"), whose variable rustc's dep-info lists as
// an env-dep.
var envMacro = regexp.MustCompile(`env!\(\s*"([A-Za-z_][A-Za-z0-9_]*)"`)

// CrateSources lists what rustc's dep-info would for a crate root: the Rust
// files of its folder and below (the stand-in reads no `mod` items, so a
// crate is its folder), sorted, and the variables its env! macros read.
func CrateSources(root string) (files, envDeps []string, err error) {
	if filepath.Base(root) == "build.rs" {
		files = []string{root}
	} else {
		err = filepath.WalkDir(filepath.Dir(root), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".rs") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return nil, nil, fmt.Errorf("couldn't read `%s`: %w", root, err)
		}
	}
	slices.Sort(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("couldn't read `%s`: %w", f, err)
		}
		for _, m := range envMacro.FindAllSubmatch(data, -1) {
			if !slices.Contains(envDeps, string(m[1])) {
				envDeps = append(envDeps, string(m[1]))
			}
		}
	}
	slices.Sort(envDeps)
	return files, envDeps, nil
}

// CompileRustc is the stand-in rustc: it answers cargo's --print probe,
// and for a crate writes its Outputs, each holding a hash of what rustc
// reads (the arguments but the output folder, the sources, the --extern
// files and the env-deps' values), so that a dependent's inputs change
// when a dependency's do. getenv reads the environment; dir is the
// working folder.
func CompileRustc(r Rustc, dir string, getenv func(string) (string, bool)) (string, error) {
	if len(r.Prints) > 0 {
		var b strings.Builder
		for _, t := range r.Types {
			fmt.Fprintf(&b, "%s\n", map[string]string{"bin": "___", "rlib": "lib___.rlib", "lib": "lib___.rlib"}[t])
		}
		b.WriteString("/usr/local/rustup/toolchains/stand-in\ntarget_arch=\"aarch64\"\ntarget_os=\"linux\"\n")
		return b.String(), nil
	}
	if r.Input == "" || r.Input == "-" || r.Crate == "" || r.OutDir == "" {
		return "", fmt.Errorf("the stand-in rustc compiles a crate root into --out-dir, with --crate-name")
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	files, envDeps, err := CrateSources(abs(r.Input))
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	for i := 0; i < len(r.Args); i++ {
		if r.Args[i] == "--out-dir" || r.Args[i] == "-L" {
			i++
			continue
		}
		fmt.Fprintf(sum, "arg %s\n", r.Args[i])
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "source %s %x\n", f, sha256.Sum256(data))
	}
	names := make([]string, 0, len(r.Externs))
	for name := range r.Externs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := r.Externs[name]
		data, err := os.ReadFile(abs(path))
		if err != nil {
			return "", fmt.Errorf("extern location for %s does not exist: %s", name, path)
		}
		fmt.Fprintf(sum, "extern %s %x\n", name, sha256.Sum256(data))
	}
	for _, e := range envDeps {
		v, _ := getenv(e)
		fmt.Fprintf(sum, "env %s=%s\n", e, v)
	}
	inputs := hex.EncodeToString(sum.Sum(nil))
	out := abs(r.OutDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	for _, name := range r.Outputs() {
		content := fmt.Sprintf("jetbake stand-in rustc output\ncrate %s\ninputs %s\n", r.Crate, inputs)
		if strings.HasSuffix(name, ".d") {
			content = filepath.Join(out, strings.TrimSuffix(name, ".d")) + ": " + strings.Join(files, " ") + "\n"
			for _, e := range envDeps {
				v, _ := getenv(e)
				content += "# env-dep:" + e + "=" + v + "\n"
			}
		}
		if err := os.WriteFile(filepath.Join(out, name), []byte(content), 0o755); err != nil {
			return "", err
		}
	}
	return "", nil
}

// RunRustc is the stand-in rustc's command line: --version, -vV, cargo's
// --print probe, or a crate to compile (CompileRustc), in dir with the
// environment getenv reads, behind rustup's proxy (the toolchain must be
// installed). It returns rustc's exit status. The stand-in rustc runs it,
// and so do the stand-in cargo (without RUSTC_WRAPPER) and the stand-in
// sccache in their own process: the stand-in images' rustc is this code,
// and a process start under QEMU costs a tenth of a second.
func RunRustc(args []string, dir string, getenv func(string) (string, bool), stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-V"):
		fmt.Fprintln(stdout, RustcVersion)
		return 0
	case len(args) == 1 && args[0] == "-vV":
		fmt.Fprintf(stdout, "%s\nbinary: rustc\nhost: %s\nrelease: 1.92.0\n", RustcVersion, HostTriple(runtime.GOARCH))
		return 0
	}
	if _, err := Toolchain(dir, Host{Env: getenv, Arch: runtime.GOARCH}); err != nil {
		fmt.Fprintln(stderr, "error: "+err.Error())
		return 1
	}
	r, err := ParseRustc(args)
	if err == nil {
		var out string
		out, err = CompileRustc(r, dir, getenv)
		fmt.Fprint(stdout, out)
	}
	if err != nil {
		fmt.Fprintln(stderr, "error: "+err.Error())
		return 1
	}
	return 0
}

// EnvLookup looks variables up in an environment as os.Environ gives it,
// the last value of a name winning, as os/exec sets it.
func EnvLookup(env []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
}
