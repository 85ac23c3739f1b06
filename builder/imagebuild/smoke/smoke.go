// Package smoke is a release's build-time smoke run: every router binary
// run with the smoke arguments on the runtime image, with a base's
// CUDA driver stub standing in for the Jetson's driver, and the judge of
// what the run found. Deferred solves it in a build of its own beside the
// image's export and push.
package smoke

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/moby/buildkit/client/llb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// Folders of the build-time smoke run: what each router printed, and a
// base's CUDA driver stub, which stands in for the Jetson's driver.
const (
	smokeDir    = "/jetbake-smoke"
	smokeDriver = "/jetbake-smoke-driver"
)

// ResultFile is the smoke run's findings, one per line.
const ResultFile = "result"

// Spec is what a release's smoke run runs, and what its judge names.
type Spec struct {
	// Router is the router's name; Args its smoke arguments (router.smoke);
	// Env its environment; Output where its stage leaves the binary.
	Router string
	Args   []string
	Env    map[string]string
	Output string
	// Paths are each target's binary in the image, in target order.
	Paths []string
	// OwnFiles are the other files jetbake's layers add to the image.
	OwnFiles []string
	// Stub says where the driver stub was looked for (Stub, CrossStub);
	// CUDA is the release's CUDA version.
	Stub StubOrigin
	CUDA string
}

// Binary is what the smoke run read from one router binary: its DT_NEEDED
// libraries and its dynamic loader (PT_INTERP), from the ELF file (Go's
// debug/elf), before running it.
type Binary struct {
	// Binary is its name in the image, e.g. "router-87"; SM its target.
	Binary string `json:"binary"`
	SM     string `json:"sm"`
	// Needed are its DT_NEEDED entries, in order.
	Needed []string `json:"needed,omitempty"`
	// Interpreter is its PT_INTERP, e.g. /lib/ld-linux-aarch64.so.1.
	Interpreter string `json:"interpreter,omitempty"`
	// NotELF says why it could not be read as an ELF file (a script, say).
	NotELF string `json:"not_elf,omitempty"`
	// Resolved says, for each DT_NEEDED entry in order, where the binary's
	// own loader found it in the runtime image during the smoke run (ld.so's
	// search: RUNPATH, LD_LIBRARY_PATH, the ld.so cache, the default
	// folders); absent without a smoke run.
	Resolved []Library `json:"resolved,omitempty"`
}

// Library is where one DT_NEEDED entry of a router resolved.
type Library struct {
	// Name is the DT_NEEDED entry, e.g. "libcudart.so.12".
	Name string `json:"name"`
	// Path is the file the loader loaded in the runtime image; empty when
	// it found none, or for the CUDA driver.
	Path string `json:"path,omitempty"`
	// FromHost marks the CUDA driver, libcuda.so.1, which NVIDIA's runtime
	// mounts from the Jetson (the smoke run loads a base's stub).
	FromHost bool `json:"from_host,omitempty"`
}

// Libraries are the files in the runtime image that the binaries' DT_NEEDED
// entries resolved to, once each, in order: not the CUDA driver, which
// comes from the Jetson.
func Libraries(bins []Binary) []string {
	var paths []string
	for _, b := range bins {
		for _, lib := range b.Resolved {
			if lib.Path != "" && !lib.FromHost && !slices.Contains(paths, lib.Path) {
				paths = append(paths, lib.Path)
			}
		}
	}
	return paths
}

// ResolvedLibraries reads the loader's trace (LD_TRACE_LOADED_OBJECTS:
// "\tlibssl.so.3 => /usr/lib/aarch64-linux-gnu/libssl.so.3 (0x...)") for
// the binary's DT_NEEDED entries, in their order.
func ResolvedLibraries(needed []string, trace string) []Library {
	found := map[string]string{}
	for _, line := range strings.Split(trace, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), " => ")
		if !ok {
			continue
		}
		path, _, _ := strings.Cut(strings.TrimSpace(rest), " (")
		if path != "not found" {
			found[name] = path
		}
	}
	out := make([]Library, 0, len(needed))
	for _, n := range needed {
		lib := Library{Name: n, Path: found[n]}
		if n == DriverLib {
			lib = Library{Name: n, FromHost: true}
		}
		out = append(out, lib)
	}
	return out
}

// On is what a smoke run runs on.
type On struct {
	// Image is the runtime image, Name how messages name it, Config its
	// image config (JSON).
	Image  llb.State
	Name   string
	Config []byte
	// Routers are each target's router build, in target order; Stub is
	// the driver stub (Stub, CrossStub).
	Routers []llb.State
	Stub    llb.State
}

// Definition runs every binary with the smoke arguments on the runtime
// image, each mounted read-only at its path in the image from the router
// build's output (the same bytes, path, libraries and environment as in the
// assembled image, without waiting for the image's layers to be staged),
// and checks that the image has a CA bundle. Before the run, the dynamic
// loader of the binary (its PT_INTERP) lists what it finds of the binary's
// libraries, as ldd has it do (LD_TRACE_LOADED_OBJECTS: every library, where
// `ld.so --list` stops at the first one missing). The binaries run directly, not through the entrypoint, which
// needs a Jetson to choose one.
func (s Spec) Definition(ctx context.Context, on On, bins []Binary) (*llb.Definition, error) {
	var config ocispecs.Image
	if err := json.Unmarshal(on.Config, &config); err != nil {
		return nil, fmt.Errorf("%s: config is not valid JSON: %w", on.Name, err)
	}
	opts := []llb.RunOption{
		llb.Args(append([]string{"/bin/sh", "-c", s.Script(bins), "jetbake-smoke"}, s.Args...)),
		llb.WithCustomNamef("%s%s %s on the runtime image", progress.SmokePrefix, s.Router, strings.Join(s.Args, " ")),
	}
	for _, kv := range config.Config.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			opts = append(opts, llb.AddEnv(k, v))
		}
	}
	// In a fixed order: the run's definition, and so its cache key, must
	// be the same on every build.
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		opts = append(opts, llb.AddEnv(k, s.Env[k]))
	}
	for i, p := range s.Paths {
		// A mount follows a link at the source path, as the copy into the
		// image does (see imagebuild's runtimeState).
		opts = append(opts, llb.AddMount(p, on.Routers[i], llb.SourcePath(s.Output), llb.Readonly))
	}
	opts = append(opts, llb.AddMount(smokeDriver, on.Stub, llb.Readonly))
	out := on.Image.Run(opts...).AddMount(smokeDir, llb.Scratch())
	def, err := out.Marshal(ctx, llb.Platform(arm64))
	if err != nil {
		return nil, fmt.Errorf("marshal the smoke run: %w", err)
	}
	return def, nil
}

// Script writes one line per finding to smokeDir/result: "stub PATH"
// when the base had a driver stub; per binary "ldd NAME CODE" (its
// loader's trace, output in NAME.ldd) or "nointerp NAME" when the image
// lacks the loader, then "rc NAME CODE" (output in NAME.log); "ca" when the
// image has a CA bundle; and "link DIR" for each folder jetbake's layers
// create that is a symbolic link in the image (the layers would put a real
// folder over it, hiding what it points to).
func (s Spec) Script(bins []Binary) string {
	var script strings.Builder
	result := smokeDir + "/" + ResultFile
	fmt.Fprintf(&script, "[ -s %s/libcuda.so.1 ] && echo \"stub $(cat %s/from)\" >>%s\n", smokeDriver, smokeDriver, result)
	fmt.Fprintf(&script, "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n", smokeDriver)
	for i, p := range s.Paths {
		name := path.Base(p)
		if i < len(bins) && bins[i].Interpreter != "" {
			interp := shellQuote(bins[i].Interpreter)
			fmt.Fprintf(&script, "if [ -x %s ]; then LD_TRACE_LOADED_OBJECTS=1 %s %s >%s/%s.ldd 2>&1; echo \"ldd %s $?\" >>%s; else echo \"nointerp %s\" >>%s; fi\n",
				interp, interp, shellQuote(p), smokeDir, name, name, result, name, result)
		}
		fmt.Fprintf(&script, "%s \"$@\" >%s/%s.log 2>&1; echo \"rc %s $?\" >>%s\n",
			shellQuote(p), smokeDir, name, name, result)
	}
	fmt.Fprintf(&script, "[ -s %s ] && echo ca >>%s\n", CABundlePath, result)
	for _, dir := range s.LayerDirs() {
		fmt.Fprintf(&script, "[ -L %s ] && echo %s >>%s\n", shellQuote(dir), shellQuote("link "+dir), result)
	}
	script.WriteString("exit 0\n")
	return script.String()
}

// LayerDirs are the folders jetbake's layers create, with their parents.
func (s Spec) LayerDirs() []string {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range append(slices.Clone(s.OwnFiles), s.Paths...) {
		for dir := path.Dir(p); dir != "/" && dir != "." && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	slices.Sort(dirs)
	return dirs
}
