package main

import (
	"strings"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
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
	// Verdict is the host rule's answer (zero when it did not run).
	Verdict computecap.HostVerdict
}

// decide chooses the binary for the host, or the failure to report.
func decide(cfg *config, img *image, h *hostInfo) decision {
	d := decision{Env: cfg.env}
	if h.found() {
		d.Candidates = candidates(cfg.table, img, h.GPU)
	}
	if d.Failure = precheck(cfg, img, h); d.Failure != "" {
		return d
	}
	if !cfg.skipL4T {
		d.Verdict = checkHost(cfg, img, h)
		if !d.Verdict.OK {
			d.Failure = hostRuleMessage(img, h, d.Verdict)
			return d
		}
	}
	chosen, err := cfg.table.Pick(h.GPU, img.caps)
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
	d.Env, d.LibraryPath = compatEnv(cfg, img, h, d.Verdict)
	return d
}

// precheck returns the failure that comes before any choice: a bad
// override, no GPU, or no access to it.
func precheck(_ *config, _ *image, h *hostInfo) string {
	switch {
	case h.OverrideErr != nil:
		return badOverrideMessage(h.OverrideErr)
	case !h.found() && h.driverUnusable():
		return driverFailedMessage(h)
	case !h.found():
		return noGPUMessage(h)
	case !h.gpuAccess():
		return noAccessMessage(h)
	}
	return ""
}

// checkHost applies the host rule of the image's JetPack flavour
// (computecap.Table.CheckHost) to the host found: the L4T release on
// JetPack 6 and earlier, the driver's CUDA version on JetPack 7 and later.
func checkHost(cfg *config, img *image, h *hostInfo) computecap.HostVerdict {
	st := h.State()
	if h.found() {
		if soc, ok := cfg.table.SoCByCapability(h.GPU); ok {
			st.SoC, st.HasSoC = soc, true
		}
	}
	st.Driver, st.HasDriver = h.Driver, h.HasDriver
	return cfg.table.CheckHost(hostNeeds(cfg, img), st)
}

// candidates judges every target of the image against gpu.
func candidates(t *computecap.Table, img *image, gpu computecap.Capability) []candidate {
	out := make([]candidate, len(img.caps))
	for i, c := range img.caps {
		runs, reason := t.RunsOn(c, gpu)
		out[i] = candidate{SM: c.String(), Path: img.Targets[i].Path, Runs: runs, Reason: reason}
	}
	return out
}

// compatEnv prepends a CUDA forward-compatibility folder to
// LD_LIBRARY_PATH: the one the host rule chose for a Jetson image whose
// CUDA is newer than the driver (compat_orin on an Orin), or for an image
// that is not for a Jetson the image's own /usr/local/cuda/compat when the
// driver is older than the image's CUDA. Otherwise the environment is left
// alone.
func compatEnv(cfg *config, img *image, h *hostInfo, v computecap.HostVerdict) (environ, string) {
	compat := v.CompatDir
	if compat == "" && img.l4tMajor == 0 && !img.cuda.IsZero() && h.HasDriver && h.Driver.Less(img.cuda) {
		compat = host.CompatDir
	}
	if compat == "" || !cfg.root.IsDir(compat) {
		return cfg.env, ""
	}
	dir := cfg.root.Path(compat)
	old := cfg.env.get(envLibraryDir)
	if old == dir || strings.HasPrefix(old, dir+":") {
		return cfg.env, ""
	}
	v2 := dir
	if old != "" {
		v2 += ":" + old
	}
	return cfg.env.with(envLibraryDir, v2), v2
}
