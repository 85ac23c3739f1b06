package detect

import (
	"strings"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// Candidate is one router binary of the image and whether it runs on the GPU.
type Candidate struct {
	// SM is the target's compute capability, such as "8.7".
	SM string `json:"sm"`
	// Path is the binary's path in the image.
	Path string `json:"path"`
	// Runs is true when the binary runs on the GPU found.
	Runs bool `json:"runs"`
	// Reason says why it runs or not.
	Reason string `json:"reason"`
}

// Decision is what the entrypoint does.
type Decision struct {
	// Candidates are the image's binaries judged against the GPU found.
	Candidates []Candidate
	// Choice is the path in the image of the binary to exec; "" on failure.
	Choice string
	// Env is the router's environment.
	Env Environ
	// LibraryPath is the new LD_LIBRARY_PATH when the compat folder was prepended.
	LibraryPath string
	// Failure is the paragraph printed when there is no choice.
	Failure string
	// Verdict is the host rule's answer (zero when it did not run).
	Verdict computecap.HostVerdict
}

// Decide chooses the binary for the host, or the failure to report.
func Decide(cfg *Config, img *ParsedDescription, h *Host) Decision {
	d := Decision{Env: cfg.Env}
	if h.Found() {
		d.Candidates = candidates(cfg.Table, img, h.GPU)
	}
	if d.Failure = precheck(cfg, img, h); d.Failure != "" {
		return d
	}
	if !cfg.SkipL4T {
		d.Verdict = CheckHost(cfg, img, h)
		if !d.Verdict.OK {
			d.Failure = hostRuleMessage(img, h, d.Verdict)
			return d
		}
	}
	chosen, err := cfg.Table.Pick(h.GPU, img.Caps)
	if err != nil {
		d.Failure = noBinaryMessage(img, h)
		return d
	}
	for i, c := range img.Caps {
		if c == chosen {
			d.Choice = img.Targets[i].Path
			break
		}
	}
	d.Env, d.LibraryPath = compatEnv(cfg, img, h, d.Verdict)
	return d
}

// precheck returns the failure that comes before any choice: a bad
// override, a driver that sees no GPU (unless the override chose the
// binary), no GPU, no access to it, or on a Jetson the NVIDIA runtime's
// files without the device nodes of its GPU driver (unless the override
// chose the binary).
func precheck(_ *Config, _ *ParsedDescription, h *Host) string {
	switch {
	case h.OverrideErr != nil:
		return badOverrideMessage(h.OverrideErr)
	case h.From != srcOverride && h.DriverSeesNoGPU():
		return noDeviceMessage(h)
	case !h.Found() && h.driverUnusable():
		return driverFailedMessage(h)
	case !h.Found():
		return noGPUMessage(h)
	case !h.GPUAccess():
		return noAccessMessage(h)
	case h.From != srcOverride && h.lacksNodes():
		return missingNodesMessage(h)
	}
	return ""
}

// CheckHost applies the host rule of the image's JetPack flavour
// (computecap.Table.CheckHost) to the host found: the L4T release on
// JetPack 6 and earlier, the driver's CUDA version on JetPack 7 and later.
func CheckHost(cfg *Config, img *ParsedDescription, h *Host) computecap.HostVerdict {
	var gpu *computecap.Capability
	if h.Found() {
		gpu = &h.GPU
	}
	return cfg.Table.CheckHost(hostNeeds(cfg, img), h.ruleState(cfg.Table, gpu))
}

// ruleState is the host as the host rule (computecap.Table.CheckHost, the
// rule's one entry) takes it: the facts read, the SoC of gpu when one is
// given (the GPU found wins over the SoC files), and the driver's answer.
func (h *Host) ruleState(t *computecap.Table, gpu *computecap.Capability) computecap.HostState {
	st := h.State()
	if gpu != nil {
		if soc, ok := t.SoCByCapability(*gpu); ok {
			st.SoC, st.HasSoC = soc, true
		}
	}
	st.Driver, st.HasDriver = h.Driver, h.HasDriver
	return st
}

// candidates judges every target of the image against gpu.
func candidates(t *computecap.Table, img *ParsedDescription, gpu computecap.Capability) []Candidate {
	out := make([]Candidate, len(img.Caps))
	for i, c := range img.Caps {
		runs, reason := t.RunsOn(c, gpu)
		out[i] = Candidate{SM: c.String(), Path: img.Targets[i].Path, Runs: runs, Reason: reason}
	}
	return out
}

// compatEnv prepends a CUDA forward-compatibility folder to
// LD_LIBRARY_PATH: the one the host rule chose for a Jetson image whose
// CUDA is newer than the driver (compat_orin on an Orin), or for an image
// that is not for a Jetson the image's own /usr/local/cuda/compat when the
// driver is older than the image's CUDA. Otherwise the environment is left
// alone.
func compatEnv(cfg *Config, img *ParsedDescription, h *Host, v computecap.HostVerdict) (Environ, string) {
	compat := v.CompatDir
	if compat == "" && img.L4TMajor == 0 && !img.CUDAVersion.IsZero() && h.HasDriver && h.Driver.Less(img.CUDAVersion) {
		compat = host.CompatDir
	}
	if compat == "" || !cfg.Root.IsDir(compat) {
		return cfg.Env, ""
	}
	dir := cfg.Root.Path(compat)
	old := cfg.Env.Get(envLibraryDir)
	if old == dir || strings.HasPrefix(old, dir+":") {
		return cfg.Env, ""
	}
	v2 := dir
	if old != "" {
		v2 += ":" + old
	}
	return cfg.Env.With(envLibraryDir, v2), v2
}
