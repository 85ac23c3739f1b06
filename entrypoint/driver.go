package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// Names of the CUDA driver library and the forward-compatibility folders:
// the image's own, and the one the NVIDIA runtime mounts for Orin.
const (
	libcudaName   = "libcuda.so.1"
	compatDir     = "/usr/local/cuda/compat"
	compatOrinDir = "/usr/local/cuda/compat_orin"
)

// libcudaDirs returns the folders where a container runtime mounts the
// host's libcuda.so.1, in the order they are searched. LD_LIBRARY_PATH
// follows them, and compatDir, the image's own forward-compatibility
// driver, comes last: it is not the host's driver.
func libcudaDirs() []string {
	return []string{
		"/usr/lib/aarch64-linux-gnu/nvidia", // JetPack 6
		"/usr/lib/aarch64-linux-gnu/tegra",  // JetPack 5
		"/usr/lib/aarch64-linux-gnu",
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib64",
		"/usr/lib/wsl/lib",
	}
}

// findLibcuda returns the path in the root of the first libcuda.so.1 found
// ("" when none) and the folders it looked in.
func findLibcuda(root sysroot, env environ) (string, []string) {
	dirs := libcudaDirs()
	dirs = append(dirs, strings.Split(env.get(envLibraryDir), ":")...)
	dirs = append(dirs, compatDir)
	var looked []string
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) || slices.Contains(looked, dir) {
			continue
		}
		looked = append(looked, dir)
		if p := filepath.Join(dir, libcudaName); root.exists(p) {
			return p, looked
		}
	}
	return "", looked
}

// probeResult is the JSON line jetbake-cudaprobe prints.
type probeResult struct {
	Major         *int `json:"major"`
	Minor         *int `json:"minor"`
	DriverVersion *int `json:"driver_version"`
}

// probeAnswer is a checked probeResult.
type probeAnswer struct {
	// GPU is device 0's compute capability.
	GPU computecap.Capability
	// Driver is the CUDA version of the driver: 12060 is 12.6.
	Driver computecap.CUDAVersion
}

// parseProbeOutput reads jetbake-cudaprobe's line, such as
// {"major":8,"minor":7,"driver_version":12060}.
func parseProbeOutput(out []byte) (probeAnswer, error) {
	line := firstLine(out)
	var r probeResult
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return probeAnswer{}, fmt.Errorf("probe printed %s, not its JSON line: %w", quoteShort(line), err)
	}
	if r.Major == nil || r.Minor == nil || r.DriverVersion == nil {
		return probeAnswer{}, fmt.Errorf("probe printed %s without major, minor and driver_version", quoteShort(line))
	}
	gpu := computecap.Capability{Major: *r.Major, Minor: *r.Minor}
	if !gpu.Valid() {
		return probeAnswer{}, fmt.Errorf("probe reported compute capability %d.%d, which is not valid", *r.Major, *r.Minor)
	}
	v := *r.DriverVersion
	if v < 1000 || v > 999_999 {
		return probeAnswer{}, fmt.Errorf("probe reported driver version %d, which is not a CUDA version like 12060", v)
	}
	return probeAnswer{GPU: gpu, Driver: computecap.CUDAVersion{Major: v / 1000, Minor: v % 1000 / 10}}, nil
}

// runProbe runs jetbake-cudaprobe at probe (a real path) on the library at
// lib (a real path) and reads its answer.
func runProbe(ctx context.Context, probe, lib string, env environ) (probeAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, probe, lib)
	cmd.Env = env
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return probeAnswer{}, toolError(ctx, err, stdout.Bytes(), stderr.Bytes())
	}
	return parseProbeOutput(stdout.Bytes())
}

// probeExists reports whether the probe at the real path p can be run.
func probeExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
