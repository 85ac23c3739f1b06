package tei

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// cudarc's linking modes, as the router's features name them.
const (
	// LinkStatic links CUDA's static libraries: only the driver,
	// libcuda.so.1, is needed at run time.
	LinkStatic = "static-linking"
	// LinkDynamic links CUDA's shared libraries (libcublas, libcublasLt,
	// libcurand, libnvrtc, libcudart) besides the driver.
	LinkDynamic = "dynamic-linking"
)

// Template names the prebuilt router a build needs, by what it records
// as DT_NEEDED: "static" (cudarc linked statically: the driver alone of
// CUDA's libraries), "static-flash" (the same with candle-flash-attn,
// whose build script links libcudart dynamically whatever cudarc does),
// "dynamic" (CUDA's shared libraries, libcudart among them), or "cpu"
// for a router without the CUDA backend.
func Template(linking string, flashAttn bool) string {
	switch {
	case linking == LinkStatic && flashAttn:
		return "static-flash"
	case linking == LinkStatic:
		return "static"
	case linking == LinkDynamic:
		return "dynamic"
	}
	return "cpu"
}

// Templates are every template a build base carries, with the linking
// mode and flash attention of each.
func Templates() []TemplateKind {
	return []TemplateKind{{LinkStatic, false}, {LinkStatic, true}, {LinkDynamic, false}, {"", false}}
}

// TemplateKind is what a router template is linked for.
type TemplateKind struct {
	Linking   string
	FlashAttn bool
}

// Name is the template's name (see Template).
func (k TemplateKind) Name() string { return Template(k.Linking, k.FlashAttn) }

// noLinkingPanic is what cudarc's build script (the revision TEI v1.8.0 to
// v1.9.3 pin) panics with when none of its linking features is on (TEI
// issue 709).
const noLinkingPanic = "None between 'dynamic-loading', 'dynamic-linking' and 'static-linking' features are active, this is a bug"

// linkingMode decides cudarc's linking from the features enabled on it.
// With both, the shared libraries are linked too, so the binary needs them.
func linkingMode(cudarcFeatures []string) (string, bool) {
	switch {
	case slices.Contains(cudarcFeatures, LinkDynamic):
		return LinkDynamic, true
	case slices.Contains(cudarcFeatures, LinkStatic):
		return LinkStatic, true
	}
	return "", false
}

// BuildScriptError is a failed build script, in cargo's shape.
type BuildScriptError struct {
	// Crate is "cudarc v0.13.5 (SOURCE)".
	Crate string
	// Script is where it ran, under the target folder.
	Script string
	// Source is the file that panicked, Message what it said.
	Source, Message string
	// Thread is the thread that panicked: "main" when empty; "<unnamed>"
	// for a rayon worker's (bindgen_cuda compiles on rayon's threads).
	Thread string
	// Output is what the script printed before it panicked, such as the
	// messages of an nvcc it ran without capturing them.
	Output string
}

func (e *BuildScriptError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "failed to run custom build command for `%s`\n\nCaused by:\n", e.Crate)
	fmt.Fprintf(&b, "  process didn't exit successfully: `%s` (exit status: 101)\n  --- stderr\n", e.Script)
	for _, line := range strings.Split(strings.TrimRight(e.Output, "\n"), "\n") {
		if line != "" {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	thread := e.Thread
	if thread == "" {
		thread = "main"
	}
	fmt.Fprintf(&b, "  thread '%s' panicked at %s:\n", thread, e.Source)
	for _, line := range strings.Split(e.Message, "\n") {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	b.WriteString("  note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace")
	return b.String()
}

// lockedPackage is a [[package]] of Cargo.lock.
type lockedPackage struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	Source  string `toml:"source"`
}

// lockedCrate describes a dependency as cargo names it in messages,
// "cudarc v0.13.5 (https://github.com/Narsil/cudarc?rev=8b4f18b4...#8b4f18b4)",
// from the workspace's Cargo.lock; "NAME" alone when it is not locked.
func lockedCrate(workspace, name string) (display, checkout string) {
	data, err := os.ReadFile(filepath.Join(workspace, "Cargo.lock"))
	if err != nil {
		return name, name
	}
	var lock struct {
		Packages []lockedPackage `toml:"package"`
	}
	if toml.Unmarshal(data, &lock) != nil {
		return name, name
	}
	for _, p := range lock.Packages {
		if p.Name != name {
			continue
		}
		display = name + " v" + p.Version
		src, ok := strings.CutPrefix(p.Source, "git+")
		if !ok {
			return display, name + "-" + p.Version
		}
		url, commit, _ := strings.Cut(src, "#")
		short := commit
		if len(short) > 8 {
			short = short[:8]
		}
		return display + " (" + url + "#" + short + ")", name + "-" + short
	}
	return name, name
}
