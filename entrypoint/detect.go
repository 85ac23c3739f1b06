package main

import (
	"context"
	"fmt"
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// Names of the detection sources, in the order they are tried.
const (
	srcOverride   = envOverride
	srcDriver     = "cuda-driver"
	srcSMI        = smiName
	srcDeviceTree = "device-tree"
	srcSocID      = "soc_id"
)

// source is what one way of finding the GPU, or one host fact, reported.
type source struct {
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

// hostInfo is everything detection learned about the host.
type hostInfo struct {
	// Sources are the detection sources tried, in order.
	Sources []source
	// Facts are the host files read besides the sources.
	Facts []source
	// GPU is the compute capability found by From.
	GPU computecap.Capability
	// From names the first source that found the GPU; "" when none did.
	From string
	// OverrideErr is set when JETBAKE_COMPUTE_CAP is not a capability.
	OverrideErr error
	// L4T is the host's Jetson Linux release when HasL4T.
	L4T    l4tVersion
	HasL4T bool
	// TegraRelease is true when /etc/nv_tegra_release exists, parsed or not.
	TegraRelease bool
	// Model is the device tree's board name, such as "NVIDIA Jetson AGX Orin Developer Kit".
	Model string
	// Driver is the driver's CUDA version when HasDriver.
	Driver    computecap.CUDAVersion
	HasDriver bool
	// Nodes are the GPU device nodes present under /dev.
	Nodes []string
	// DriverState says how far the CUDA driver query got.
	DriverState driverState
}

// driverState says how far the CUDA driver query got, for the probe's
// evidence, which may not repeat the paths in the source's detail.
type driverState int

// States of the CUDA driver query.
const (
	// driverNotTried: the query did not run.
	driverNotTried driverState = iota
	// driverNoLibrary: no libcuda.so.1 was found.
	driverNoLibrary
	// driverNoProbe: libcuda.so.1 was found but jetbake-cudaprobe was not.
	driverNoProbe
	// driverFailed: the probe ran and gave no usable answer.
	driverFailed
	// driverAnswered: the driver reported the GPU and its CUDA version.
	driverAnswered
)

// found reports whether some source found the GPU.
func (h *hostInfo) found() bool { return h.From != "" }

// gpuAccess reports whether the container shows a trace of the NVIDIA
// runtime: an answer from the driver or nvidia-smi, the L4T release file it
// mounts, or a GPU device node. The device tree is visible without it.
func (h *hostInfo) gpuAccess() bool {
	for _, s := range h.Sources {
		if s.Found && (s.Name == srcOverride || s.Name == srcDriver || s.Name == srcSMI) {
			return true
		}
	}
	return h.TegraRelease || len(h.Nodes) > 0
}

// step is one detection source.
type step func(ctx context.Context, cfg *config, h *hostInfo) (source, computecap.Capability)

// detect tries the sources in order. It stops at the first answer, except
// that in explain mode every source runs, and that the driver runs after an
// override when wantDriver (its CUDA version decides LD_LIBRARY_PATH).
func detect(ctx context.Context, cfg *config, wantDriver bool) *hostInfo {
	h := &hostInfo{}
	readHostFacts(cfg.root, h)
	steps := [...]struct {
		name string
		run  step
	}{
		{srcOverride, fromOverride},
		{srcDriver, fromDriver},
		{srcSMI, fromNvidiaSMI},
		{srcDeviceTree, fromDeviceTree},
		{srcSocID, fromSocID},
	}
	for _, s := range steps {
		if h.found() && !cfg.explain && (s.name != srcDriver || !wantDriver) {
			continue
		}
		src, c := s.run(ctx, cfg, h)
		h.Sources = append(h.Sources, src)
		if src.Found && !h.found() {
			h.GPU, h.From = c, src.Name
		}
	}
	return h
}

// fromOverride reads JETBAKE_COMPUTE_CAP.
func fromOverride(_ context.Context, cfg *config, h *hostInfo) (source, computecap.Capability) {
	src := source{Name: srcOverride}
	v := cfg.env.get(envOverride)
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
func fromDriver(ctx context.Context, cfg *config, h *hostInfo) (source, computecap.Capability) {
	src := source{Name: srcDriver}
	lib, looked := findLibcuda(cfg.root, cfg.env)
	if lib == "" {
		h.DriverState = driverNoLibrary
		src.Detail, src.LookedAt = libcudaName+" not found", looked
		return src, computecap.Capability{}
	}
	probe := cfg.probePath()
	if !probeExists(probe) {
		h.DriverState = driverNoProbe
		src.Detail = fmt.Sprintf("found %s but not %s (set %s to its path)", lib, probe, envProbe)
		return src, computecap.Capability{}
	}
	ans, err := runProbe(ctx, probe, cfg.root.path(lib), cfg.env)
	if err != nil {
		h.DriverState = driverFailed
		src.Detail = lib + ": " + err.Error()
		return src, computecap.Capability{}
	}
	h.Driver, h.HasDriver, h.DriverState = ans.Driver, true, driverAnswered
	src.Found, src.Value = true, ans.GPU.String()
	src.Detail = fmt.Sprintf("%s: driver for CUDA %s", lib, ans.Driver)
	return src, ans.GPU
}

// fromNvidiaSMI asks nvidia-smi, when there is one.
func fromNvidiaSMI(ctx context.Context, cfg *config, _ *hostInfo) (source, computecap.Capability) {
	src := source{Name: srcSMI}
	path, looked := findNvidiaSMI(cfg.root, cfg.env)
	if path == "" {
		src.Detail, src.LookedAt = "not found", looked
		return src, computecap.Capability{}
	}
	out, err := runNvidiaSMI(ctx, cfg.root, path, cfg.env)
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

// fromDeviceTree maps the device tree's SoC entry to its GPU.
func fromDeviceTree(_ context.Context, cfg *config, _ *hostInfo) (source, computecap.Capability) {
	src := source{Name: srcDeviceTree}
	for _, p := range deviceTreeFiles(compatibleName) {
		data, err := cfg.root.readFile(p)
		if err != nil {
			continue
		}
		entries := parseCompatible(data)
		soc, ok := socFromCompatible(entries)
		if !ok {
			src.Detail = fmt.Sprintf("%s lists no Jetson SoC: %s", p, quoteShort(strings.Join(entries, ", ")))
			return src, computecap.Capability{}
		}
		src.Found, src.Value = true, soc.Capability.String()
		src.Detail = fmt.Sprintf("%s: nvidia,%s is Jetson %s", p, soc.Name, soc.Family)
		return src, soc.Capability
	}
	files := deviceTreeFiles(compatibleName)
	src.Detail = "absent"
	src.LookedAt = files[:]
	return src, computecap.Capability{}
}

// fromSocID maps /sys/devices/soc0/soc_id to its GPU.
func fromSocID(_ context.Context, cfg *config, _ *hostInfo) (source, computecap.Capability) {
	src := source{Name: srcSocID}
	data, err := cfg.root.readFile(socIDPath)
	if err != nil {
		src.Detail = "absent"
		return src, computecap.Capability{}
	}
	if fam, err := cfg.root.readFile(socFamilyPath); err == nil {
		if f := strings.TrimSpace(string(fam)); f != "Tegra" {
			src.Detail = fmt.Sprintf("%s is %s, not Tegra", socFamilyPath, quoteShort(f))
			return src, computecap.Capability{}
		}
	}
	id, err := parseSocID(data)
	if err != nil {
		src.Detail = socIDPath + ": " + err.Error()
		return src, computecap.Capability{}
	}
	soc, ok := computecap.SoCByID(id)
	if !ok {
		src.Detail = fmt.Sprintf("%s %d is not a Jetson SoC", socIDPath, id)
		return src, computecap.Capability{}
	}
	src.Found, src.Value = true, soc.Capability.String()
	src.Detail = fmt.Sprintf("%s %d is %s, Jetson %s", socIDPath, id, soc.Name, soc.Family)
	return src, soc.Capability
}
