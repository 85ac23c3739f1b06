package tei

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Unit kinds: what rustc is asked to produce.
const (
	// KindLib is a library crate (--crate-type lib: an rlib).
	KindLib = "lib"
	// KindBin is a binary crate (--crate-type bin), linked by rustc.
	KindBin = "bin"
	// KindBuildScript is a build script, build.rs, compiled as a binary
	// that cargo then runs.
	KindBuildScript = "custom-build"
)

// Unit is one rustc invocation of a cargo build: a crate of the workspace
// that the build needs (cargo's "compilation unit").
type Unit struct {
	// Package and Version name the package, Crate the crate rustc builds
	// ("text_embeddings_core", "build_script_build").
	Package, Version, Crate string
	// Kind is KindLib, KindBin or KindBuildScript.
	Kind string
	// Dir is the package's folder, Root the crate root under it
	// ("src/lib.rs", "build.rs").
	Dir, Root string
	// Features are the package's enabled features, sorted.
	Features []string
	// Links are the units this one names with --extern, by index.
	Links []int
	// Env is what cargo sets for rustc besides its own environment: the
	// CARGO_PKG_* variables and what the package's build script sets with
	// cargo:rustc-env.
	Env map[string]string
}

// Metadata is cargo's -C metadata hash: the package, its version, kind
// and features (not its source), which names its output files.
func (u Unit) Metadata() string {
	sum := sha256.Sum256([]byte(strings.Join(append([]string{u.Package, u.Version, u.Kind}, u.Features...), "\x00")))
	return hex.EncodeToString(sum[:8])
}

// Units lists the rustc invocations of `cargo build ARGS` in dir, a unit's
// links before it: the selected package's path dependencies that its
// features enable, transitively, each package's build script before its
// crate, then the package's library and its binary. Crates from crates.io
// and git are left out: the stand-in has no registry, and they are cached
// as the workspace's libraries are.
func Units(dir string, args BuildArgs, h Host) ([]Unit, error) {
	ws, pkg, res, err := selected(dir, args)
	if err != nil {
		return nil, err
	}
	w := &unitWalk{ws: ws, h: h, done: map[string]int{}}
	links, err := w.deps(pkg, res)
	if err != nil {
		return nil, err
	}
	script := w.buildScript(pkg, res.Features)
	if _, err := os.Stat(filepath.Join(filepath.Dir(pkg.Path), "src", "lib.rs")); err == nil {
		links = append(links, w.add(w.unit(pkg, res.Features, KindLib, "src/lib.rs", links, script)))
	}
	root := "src/main.rs"
	for _, b := range pkg.Bins {
		if b.Name == args.Bin && b.Path != "" {
			root = b.Path
		}
	}
	w.add(w.unit(pkg, res.Features, KindBin, root, links, script))
	return w.units, nil
}

// unitWalk collects the units of a build, each package once.
type unitWalk struct {
	ws    *Manifest
	h     Host
	units []Unit
	done  map[string]int // manifest path: index of its library unit
}

func (w *unitWalk) add(u Unit) int {
	w.units = append(w.units, u)
	return len(w.units) - 1
}

// deps adds the libraries of m's enabled path dependencies and returns
// their indexes.
func (w *unitWalk) deps(m *Manifest, res Resolution) ([]int, error) {
	names := make([]string, 0, len(m.Dependencies))
	for name := range m.Dependencies {
		names = append(names, name)
	}
	sort.Strings(names)
	var links []int
	for _, name := range names {
		dm, dres, err := resolveDependency(m, res, name)
		if err != nil {
			return nil, err
		}
		if dm == nil {
			continue
		}
		if i, ok := w.done[dm.Path]; ok {
			links = append(links, i)
			continue
		}
		sub, err := w.deps(dm, dres)
		if err != nil {
			return nil, err
		}
		script := w.buildScript(dm, dres.Features)
		i := w.add(w.unit(dm, dres.Features, KindLib, "src/lib.rs", sub, script))
		w.done[dm.Path] = i
		links = append(links, i)
	}
	return links, nil
}

// buildScript adds the unit of m's build.rs, when it has one, and returns
// what the script sets for the crate's compilation (cargo:rustc-env).
func (w *unitWalk) buildScript(m *Manifest, features []string) map[string]string {
	if _, err := os.Stat(filepath.Join(filepath.Dir(m.Path), "build.rs")); err != nil {
		return nil
	}
	u := w.unit(m, features, KindBuildScript, "build.rs", nil, nil)
	u.Crate = "build_script_build"
	w.add(u)
	return scriptEnv(m.Package.Name, w.h)
}

// scriptEnv is what the build scripts of TEI's packages set with
// cargo:rustc-env, which the crates read with env!: the candle backend
// hands on CUDA_COMPUTE_CAP (testdata/tei-source/backends/candle/build.rs),
// the router GIT_SHA as VERGEN_GIT_SHA (router/build.rs).
func scriptEnv(pkg string, h Host) map[string]string {
	out := map[string]string{}
	switch pkg {
	case "text-embeddings-backend-candle":
		if v, ok := h.Env("CUDA_COMPUTE_CAP"); ok {
			out["CUDA_COMPUTE_CAP"] = v
		}
	case "text-embeddings-router":
		if v, ok := h.Env("GIT_SHA"); ok {
			out["VERGEN_GIT_SHA"] = v
		}
	}
	return out
}

func (w *unitWalk) unit(m *Manifest, features []string, kind, root string, links []int, extra map[string]string) Unit {
	version := m.VersionIn(w.ws)
	dir := filepath.Dir(m.Path)
	env := map[string]string{"CARGO_PKG_NAME": m.Package.Name, "CARGO_PKG_VERSION": version,
		"CARGO_MANIFEST_DIR": dir, "CARGO_CRATE_NAME": strings.ReplaceAll(m.Package.Name, "-", "_")}
	for k, v := range extra {
		env[k] = v
	}
	return Unit{Package: m.Package.Name, Version: version, Crate: strings.ReplaceAll(m.Package.Name, "-", "_"),
		Kind: kind, Dir: dir, Root: root, Features: slices.Clone(features), Links: slices.Clone(links), Env: env}
}

// RustcArgs is the rustc command line cargo gives u, as `cargo build -v`
// prints it (run in the workspace root): its crate root, type, features
// as --cfg, its metadata hash and output folder deps, and --extern for
// each of its links.
func (u Unit) RustcArgs(workspace, deps string, release bool, units []Unit) []string {
	root, err := filepath.Rel(workspace, filepath.Join(u.Dir, u.Root))
	if err != nil {
		root = filepath.Join(u.Dir, u.Root)
	}
	crateType := KindLib
	if u.Kind != KindLib {
		crateType = KindBin
	}
	args := []string{"--crate-name", u.Crate, "--edition=2021", root, "--error-format=json",
		"--crate-type", crateType, "--emit=dep-info,link"}
	if release && u.Kind != KindBuildScript {
		args = append(args, "-C", "opt-level=3", "-C", "codegen-units=1")
	}
	for _, f := range u.Features {
		args = append(args, "--cfg", fmt.Sprintf("feature=%q", f))
	}
	meta := u.Metadata()
	args = append(args, "-C", "metadata="+meta, "-C", "extra-filename=-"+meta, "--out-dir", deps, "-L", "dependency="+deps)
	for _, i := range u.Links {
		l := units[i]
		args = append(args, "--extern", l.Crate+"="+filepath.Join(deps, "lib"+l.Crate+"-"+l.Metadata()+".rlib"))
	}
	return args
}
