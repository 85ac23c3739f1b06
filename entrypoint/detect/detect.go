package detect

import (
	"context"
	"fmt"
	"strings"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// Names of the detection sources, in the order they are tried.
const (
	srcOverride   = EnvOverride
	SourceDriver  = "cuda-driver"
	srcSMI        = smiName
	srcDeviceTree = "device-tree"
	srcSocID      = "soc_id"
)

// Source is what one way of finding the GPU, or one host fact, reported.
type Source struct {
	// Name names the source, such as "nvidia-smi" or "/etc/nv_tegra_release".
	Name string `json:"name"`
	// Found is true when the source gave an answer.
	Found bool `json:"found"`
	// Value is the answer, such as "8.7".
	Value string `json:"value,omitempty"`
	// Detail says where the answer came from, or why there is none.
	Detail string `json:"detail"`
	// LookedAt lists the places searched, when there were several.
	LookedAt []string `json:"looked_at,omitempty"`
}

// Host is everything detection learned about the host: the facts
// package host read from its files (the SoC, the L4T release, the board
// name, libcuda's path), and what the sources and the driver answered.
type Host struct {
	// Facts are the host's files as package host read them.
	*host.Facts
	// table is the table of Jetson facts detection used.
	table *computecap.Table
	// Path says how the GPU was found: PathFast or PathFull; PathWhy why.
	Path, PathWhy string
	// Sources are the detection sources tried, in order.
	Sources []Source
	// HostFiles report the host files read besides the sources, for
	// --explain.
	HostFiles []Source
	// GPU is the compute capability found by From.
	GPU computecap.Capability
	// From names the first source that found the GPU; "" when none did.
	From string
	// OverrideErr is set when JETBAKE_COMPUTE_CAP is not a capability.
	OverrideErr error
	// Driver is the driver's CUDA version when HasDriver.
	Driver    computecap.CUDAVersion
	HasDriver bool
	// Nodes are the GPU device nodes present under /dev.
	Nodes []string
	// DriverState says how far the CUDA driver query got.
	DriverState DriverState
	// DriverError is the CUDA error a driver call returned when
	// DriverFailed, such as CUDA_ERROR_NO_DEVICE; "" when the probe named
	// none (the library did not load, or the probe did not say).
	DriverError string
}

// DriverState says how far the CUDA driver query got, for the probe's
// evidence, which may not repeat the paths in the source's detail.
type DriverState int

// States of the CUDA driver query.
const (
	// DriverNotTried: the query did not run.
	DriverNotTried DriverState = iota
	// DriverNoLibrary: no libcuda.so.1 was found.
	DriverNoLibrary
	// DriverNoProbe: libcuda.so.1 was found but jetbake-cudaprobe was not.
	DriverNoProbe
	// DriverFailed: the probe ran and gave no usable answer.
	DriverFailed
	// DriverVersionOnly: the driver reported its CUDA version; it was not
	// asked for the GPU (fast path).
	DriverVersionOnly
	// DriverAnswered: the driver reported the GPU and its CUDA version.
	DriverAnswered
)

// Found reports whether some source found the GPU.
func (h *Host) Found() bool { return h.From != "" }

// GPUAccess reports whether the container shows a trace of the NVIDIA
// runtime: an answer from the driver or nvidia-smi, the L4T release file it
// mounts, or a GPU device node. The device tree is visible without it.
func (h *Host) GPUAccess() bool {
	for _, s := range h.Sources {
		if s.Found && (s.Name == srcOverride || s.Name == SourceDriver || s.Name == srcSMI) {
			return true
		}
	}
	return h.TegraRelease || len(h.Nodes) > 0
}

// driverUnusable reports whether the NVIDIA runtime's files are in the
// container (the L4T release file or a GPU device node) and libcuda.so.1 was
// found, but the driver gave no usable answer.
func (h *Host) driverUnusable() bool {
	return h.DriverState == DriverFailed && (h.TegraRelease || len(h.Nodes) > 0)
}

// lacksNodes reports whether, on a Jetson whose GPU driver the table names,
// a device node that driver needs is missing (host.GPUNodes) and no
// driver call proved the GPU reachable: the fast path asks the driver for
// its version alone, which needs no device node, so without this check a
// container with the driver's libraries but no nodes would start the
// router, which then fails in its own words. A few stat calls, read with
// the host's facts.
func (h *Host) lacksNodes() bool {
	return h.GPUNodes.HasDriver && len(h.GPUNodes.Missing) > 0 && h.DriverState != DriverAnswered
}

// DriverSeesNoGPU reports whether the CUDA driver loaded but its cuInit
// found no GPU (CUDA_ERROR_NO_DEVICE): whatever the SoC files say, no
// binary can use the GPU in this container.
func (h *Host) DriverSeesNoGPU() bool {
	return h.DriverState == DriverFailed && h.DriverError == cudaNoDevice
}

// Detection paths, shown by --explain.
const (
	// PathFast: a Tegra soc_id names the SoC, whose SM comes from the
	// table; the driver is asked only for its CUDA version (no cuInit).
	PathFast = "fast"
	// PathFull: the sources are asked in order, the driver with cuInit.
	PathFull = "full"
)

// step is one detection source.
type step func(ctx context.Context, cfg *Config, h *Host) (Source, computecap.Capability)

// Detect reads the host facts and finds the GPU. On a Jetson whose soc_id
// names a SoC of the table it takes the fast path (see detectFast), unless
// cfg.Full asks the driver itself (the evidence probe). Otherwise it
// tries the sources in order and stops at the first answer, except that
// with cfg.Explain every source runs, and that the driver runs after an
// override when wantDriver (its CUDA version decides the host rule and
// LD_LIBRARY_PATH).
func Detect(ctx context.Context, cfg *Config, wantDriver bool) *Host {
	h := &Host{table: cfg.Table, Facts: host.Read(cfg.Root, cfg.Table, host.Options{LibraryPath: cfg.Env.Get(envLibraryDir)})}
	reportHostFiles(cfg.Root, h)
	if !cfg.Full && h.HasIDSoC && !h.Conflict {
		detectFast(ctx, cfg, h)
		return h
	}
	h.Path, h.PathWhy = PathFull, fullWhy(cfg, h)
	steps := [...]struct {
		name string
		run  step
	}{
		{srcOverride, fromOverride},
		{SourceDriver, fromDriver},
		{srcSMI, fromNvidiaSMI},
		{srcDeviceTree, fromDeviceTree},
		{srcSocID, fromSocID},
	}
	for _, s := range steps {
		if h.Found() && !cfg.Explain && (s.name != SourceDriver || !wantDriver) {
			continue
		}
		h.run(ctx, cfg, s.run)
	}
	return h
}

// run runs one source, records it and takes its answer when it is the first.
func (h *Host) run(ctx context.Context, cfg *Config, s step) Source {
	src, c := s(ctx, cfg, h)
	h.Sources = append(h.Sources, src)
	if src.Found && c.Valid() && !h.Found() {
		h.GPU, h.From = c, src.Name
	}
	return src
}

// fullWhy says why the fast path was not taken.
func fullWhy(cfg *Config, h *Host) string {
	switch {
	case cfg.Full && cfg.FullWhy != "":
		return cfg.FullWhy
	case cfg.Full:
		return "asked to ask the driver itself (cuInit)"
	case h.Conflict:
		return "the device tree names " + h.DTSoC.Name + " but soc_id names " + h.IDSoC.Name
	default:
		return host.SocIDPath + " names no Jetson SoC"
	}
}

// detectFast is the start on a Jetson: the override if set, then the SoC
// of soc_id with its SM from the table, and the driver's CUDA version from
// cuDriverGetVersion alone, which needs no cuInit. The full driver query
// runs only when the version query fails or disagrees with the table's
// CUDA for the host's L4T release. It never calls cuInit otherwise, so a
// driver that would see no GPU (CUDA_ERROR_NO_DEVICE) is not noticed here:
// jetbake-probe, which always asks cuInit, is what says so on a Jetson.
func detectFast(ctx context.Context, cfg *Config, h *Host) {
	h.Path = PathFast
	h.PathWhy = host.SocIDPath + " names " + h.IDSoC.Name + " (Jetson " + h.IDSoC.Family +
		"): SM from the table, driver CUDA version from cuDriverGetVersion without cuInit"
	h.run(ctx, cfg, fromOverride)
	h.run(ctx, cfg, fromSocID)
	src := h.run(ctx, cfg, fromDriverVersion)
	why := ""
	switch {
	case h.Libcuda != "" && !src.Found:
		why = "cuDriverGetVersion gave no answer"
	case h.HasDriver && h.HasL4T:
		if want, ok := h.table.DriverCUDAForL4T(h.L4T); ok && want.Major != h.Driver.Major {
			why = "the driver reports CUDA " + h.Driver.String() + " but L4T R" + h.L4T.String() + " ships CUDA " + want.String()
		}
	}
	if why == "" {
		return
	}
	h.Path, h.PathWhy = PathFull, why+": asked the driver in full"
	h.HasDriver = false
	full, c := fromDriver(ctx, cfg, h)
	h.Sources = append(h.Sources, full)
	if full.Found && h.From == srcSocID {
		h.GPU, h.From = c, SourceDriver
	}
}

// fromOverride reads JETBAKE_COMPUTE_CAP.
func fromOverride(_ context.Context, cfg *Config, h *Host) (Source, computecap.Capability) {
	src := Source{Name: srcOverride}
	v := cfg.Env.Get(EnvOverride)
	if strings.TrimSpace(v) == "" {
		src.Detail = "not set"
		return src, computecap.Capability{}
	}
	c, err := computecap.Parse(v)
	if err != nil {
		h.OverrideErr = err
		src.Detail = err.Error()
		return src, computecap.Capability{}
	}
	src.Found, src.Value, src.Detail = true, c.String(), "set by the user"
	return src, c
}

// fromDriver asks the CUDA driver through jetbake-cudaprobe.
func fromDriver(ctx context.Context, cfg *Config, h *Host) (Source, computecap.Capability) {
	src := Source{Name: SourceDriver}
	lib := h.Libcuda
	if lib == "" {
		h.DriverState = DriverNoLibrary
		src.Detail, src.LookedAt = host.LibcudaName+" not found", h.LibcudaLooked
		return src, computecap.Capability{}
	}
	probe := cfg.ProbePath()
	if !ProbeExists(probe) {
		h.DriverState = DriverNoProbe
		src.Detail = fmt.Sprintf("found %s but not %s (set %s to its path)", lib, probe, EnvProbe)
		return src, computecap.Capability{}
	}
	ans, cudaErr, err := runProbe(ctx, probe, cfg.Root.Path(lib), cfg.Env)
	if err != nil {
		h.DriverState, h.DriverError = DriverFailed, cudaErr
		src.Detail = lib + ": " + err.Error()
		return src, computecap.Capability{}
	}
	h.Driver, h.HasDriver, h.DriverState = ans.Driver, true, DriverAnswered
	src.Found, src.Value = true, ans.GPU.String()
	src.Detail = fmt.Sprintf("%s: driver for CUDA %s", lib, ans.Driver)
	return src, ans.GPU
}

// fromNvidiaSMI asks nvidia-smi, when there is one.
func fromNvidiaSMI(ctx context.Context, cfg *Config, _ *Host) (Source, computecap.Capability) {
	src := Source{Name: srcSMI}
	path, looked := findNvidiaSMI(cfg.Root, cfg.Env)
	if path == "" {
		src.Detail, src.LookedAt = "not found", looked
		return src, computecap.Capability{}
	}
	out, err := runNvidiaSMI(ctx, cfg.Root, path, cfg.Env)
	if err != nil {
		src.Detail = path + ": " + err.Error()
		return src, computecap.Capability{}
	}
	c, err := parseNvidiaSMI(out)
	if err != nil {
		src.Detail = path + " " + err.Error()
		return src, computecap.Capability{}
	}
	src.Found, src.Value, src.Detail = true, c.String(), path+" answered "+c.String()
	return src, c
}

// fromDriverVersion asks the CUDA driver for its CUDA version only
// (cuDriverGetVersion, no cuInit), through jetbake-cudaprobe.
func fromDriverVersion(ctx context.Context, cfg *Config, h *Host) (Source, computecap.Capability) {
	src := Source{Name: SourceDriver}
	lib := h.Libcuda
	probe := cfg.ProbePath()
	switch {
	case lib == "":
		h.DriverState = DriverNoLibrary
		src.Detail, src.LookedAt = host.LibcudaName+" not found", h.LibcudaLooked
		return src, computecap.Capability{}
	case !ProbeExists(probe):
		h.DriverState = DriverNoProbe
		src.Detail = fmt.Sprintf("found %s but not %s (set %s to its path)", lib, probe, EnvProbe)
		return src, computecap.Capability{}
	}
	v, err := runVersionProbe(ctx, probe, cfg.Root.Path(lib), cfg.Env)
	if err != nil {
		h.DriverState = DriverFailed
		src.Detail = lib + ": " + err.Error()
		return src, computecap.Capability{}
	}
	h.Driver, h.HasDriver, h.DriverState = v, true, DriverVersionOnly
	src.Found, src.Value = true, "CUDA "+v.String()
	src.Detail = fmt.Sprintf("%s: driver for CUDA %s (cuDriverGetVersion only, no cuInit)", lib, v)
	return src, computecap.Capability{}
}

// fromDeviceTree maps the device tree's SoC entry to its GPU.
func fromDeviceTree(_ context.Context, cfg *Config, h *Host) (Source, computecap.Capability) {
	src := Source{Name: srcDeviceTree}
	f := h.Facts
	if f.CompatiblePath == "" {
		files := host.DeviceTreeFiles("compatible")
		src.Detail, src.LookedAt = "absent", files[:]
		return src, computecap.Capability{}
	}
	if !f.HasDTSoC {
		src.Detail = fmt.Sprintf("%s lists no Jetson SoC: %s", f.CompatiblePath, computecap.QuoteShort(strings.Join(f.Compatible, ", ")))
		return src, computecap.Capability{}
	}
	src.Found, src.Value = true, f.DTSoC.Capability.String()
	src.Detail = fmt.Sprintf("%s: nvidia,%s is Jetson %s", f.CompatiblePath, f.DTSoC.Name, f.DTSoC.Family)
	return src, f.DTSoC.Capability
}

// fromSocID maps /sys/devices/soc0/soc_id to its GPU.
func fromSocID(_ context.Context, cfg *Config, h *Host) (Source, computecap.Capability) {
	src := Source{Name: srcSocID}
	f := h.Facts
	switch {
	case !f.HasSocID && f.SocIDErr == nil:
		src.Detail = "absent"
	case f.SocIDErr != nil:
		src.Detail = host.SocIDPath + ": " + f.SocIDErr.Error()
	case f.Family != "" && f.Family != "Tegra":
		src.Detail = fmt.Sprintf("%s is %s, not Tegra", host.SocFamilyPath, computecap.QuoteShort(f.Family))
	case !f.HasIDSoC:
		src.Detail = fmt.Sprintf("%s %d is not a Jetson SoC", host.SocIDPath, f.SocID)
	default:
		src.Found, src.Value = true, f.IDSoC.Capability.String()
		src.Detail = fmt.Sprintf("%s %d is %s, Jetson %s", host.SocIDPath, f.SocID, f.IDSoC.Name, f.IDSoC.Family)
		return src, f.IDSoC.Capability
	}
	return src, computecap.Capability{}
}
