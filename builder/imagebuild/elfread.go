package imagebuild

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/gatewayfile"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/builder/plan"
)

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
	// mounts from the Jetson (the smoke run loads the build base's stub).
	FromHost bool `json:"from_host,omitempty"`
}

// resolvedLibraries reads the loader's trace (LD_TRACE_LOADED_OBJECTS:
// "\tlibssl.so.3 => /usr/lib/aarch64-linux-gnu/libssl.so.3 (0x...)") for
// the binary's DT_NEEDED entries, in their order.
func resolvedLibraries(needed []string, trace string) []Library {
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
		if n == smoke.DriverLib {
			lib = Library{Name: n, FromHost: true}
		}
		out = append(out, lib)
	}
	return out
}

// binary returns what was read of the binary named name, or nil.
func (j *releaseJob) binary(name string) *Binary {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.binaries {
		if j.binaries[i].Binary == name {
			b := j.binaries[i]
			return &b
		}
	}
	return nil
}

// readBinaries builds every router of run and reads its ELF header,
// program headers and dynamic section through the gateway, a few
// kilobytes, not the whole binary (TEI's router is hundreds of megabytes).
func (j *releaseJob) readBinaries(ctx context.Context, c gateway.Client, run *smokeRun) ([]Binary, error) {
	out := make([]Binary, len(j.release.Targets))
	for i, t := range j.release.Targets {
		out[i] = Binary{Binary: path.Base(t.Path), SM: t.SM}
		r, err := j.openRouter(ctx, c, run.routers[i], t, run.imports)
		if err != nil {
			return nil, err
		}
		out[i].Needed, out[i].Interpreter, err = gatewayfile.ReadELF(r)
		if err != nil {
			out[i].NotELF = err.Error()
		}
	}
	return out, nil
}

// openRouter builds the router stage st of target t and opens its output
// for ranged reads through the gateway.
func (j *releaseJob) openRouter(ctx context.Context, c gateway.Client, st llb.State, t plan.Target, imports []gateway.CacheOptionsEntry) (*gatewayfile.Reader, error) {
	def, err := st.Marshal(ctx, llb.Platform(arm64Platform()))
	if err != nil {
		return nil, err
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true, CacheImports: imports})
	if err != nil {
		return nil, j.compileError(t, err)
	}
	ref, err := res.SingleRef()
	if err != nil {
		return nil, err
	}
	r, err := gatewayfile.Open(ctx, ref, j.plan.Router.Output)
	if err != nil {
		return nil, fmt.Errorf("%s: the router stage has no %s: %w", t.Arch, j.plan.Router.Output, err)
	}
	return r, nil
}
