package main

import (
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// candidate is one router binary of the image and whether it runs on the GPU.
type candidate struct {
	// SM is the target's compute capability, such as "8.7".
	SM string `json:"sm"`
	// Path is the binary's path in the image.
	Path string `json:"path"`
	// Runs is true when the binary runs on the GPU found.
	Runs bool `json:"runs"`
	// Reason says why it runs or not.
	Reason string `json:"reason"`
}

// decision is what the entrypoint does.
type decision struct {
	// Candidates are the image's binaries judged against the GPU found.
	Candidates []candidate
	// Choice is the path in the image of the binary to exec; "" on failure.
	Choice string
	// Env is the router's environment.
	Env environ
	// LibraryPath is the new LD_LIBRARY_PATH when the compat folder was prepended.
	LibraryPath string
	// Failure is the paragraph printed when there is no choice.
	Failure string
}

// decide chooses the binary for the host, or the failure to report.
func decide(cfg *config, img *image, h *hostInfo) decision {
	d := decision{Env: cfg.env}
	if h.found() {
		d.Candidates = candidates(img, h.GPU)
	}
	if d.Failure = precheck(cfg, img, h); d.Failure != "" {
		return d
	}
	chosen, err := computecap.Pick(h.GPU, img.caps)
	if err != nil {
		d.Failure = noBinaryMessage(img, h)
		return d
	}
	for i, c := range img.caps {
		if c == chosen {
			d.Choice = img.Targets[i].Path
			break
		}
	}
	d.Env, d.LibraryPath = compatEnv(cfg, img, h)
	return d
}

// precheck returns the failure that comes before any choice: a bad
// override, no GPU, no access to it, or the wrong L4T release.
func precheck(cfg *config, img *image, h *hostInfo) string {
	switch {
	case h.OverrideErr != nil:
		return badOverrideMessage(h.OverrideErr)
	case !h.found():
		return noGPUMessage(h)
	case !h.gpuAccess():
		return noAccessMessage(h)
	case !cfg.skipL4T && h.HasL4T && img.l4tMajor != 0 && h.L4T.Major != img.l4tMajor:
		return l4tMismatchMessage(img, h)
	}
	return ""
}

// candidates judges every target of the image against gpu.
func candidates(img *image, gpu computecap.Capability) []candidate {
	out := make([]candidate, len(img.caps))
	for i, c := range img.caps {
		runs, reason := computecap.RunsOn(c, gpu)
		out[i] = candidate{SM: c.String(), Path: img.Targets[i].Path, Runs: runs, Reason: reason}
	}
	return out
}

// compatEnv prepends a CUDA forward-compatibility folder to LD_LIBRARY_PATH
// when the driver is older than the image's CUDA: on an Orin the one the
// NVIDIA runtime mounts (compat_orin) when present, else the image's own.
// Without such a folder the environment is left alone.
func compatEnv(cfg *config, img *image, h *hostInfo) (environ, string) {
	if img.cuda.IsZero() || !h.HasDriver || !h.Driver.Less(img.cuda) {
		return cfg.env, ""
	}
	compat := compatDir
	if h.found() && h.GPU.Canonical() == (computecap.Capability{Major: 8, Minor: 7}) && cfg.root.isDir(compatOrinDir) {
		compat = compatOrinDir
	}
	if !cfg.root.isDir(compat) {
		return cfg.env, ""
	}
	dir := cfg.root.path(compat)
	old := cfg.env.get(envLibraryDir)
	if old == dir || strings.HasPrefix(old, dir+":") {
		return cfg.env, ""
	}
	v := dir
	if old != "" {
		v += ":" + old
	}
	return cfg.env.with(envLibraryDir, v), v
}
