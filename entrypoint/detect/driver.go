package detect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

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
		return probeAnswer{}, fmt.Errorf("probe printed %s, not its JSON line: %w", computecap.QuoteShort(line), err)
	}
	if r.Major == nil || r.Minor == nil || r.DriverVersion == nil {
		return probeAnswer{}, fmt.Errorf("probe printed %s without major, minor and driver_version", computecap.QuoteShort(line))
	}
	gpu := computecap.Capability{Major: *r.Major, Minor: *r.Minor}
	if !gpu.Valid() {
		return probeAnswer{}, fmt.Errorf("probe reported compute capability %d.%d, which is not valid", *r.Major, *r.Minor)
	}
	driver, err := driverCUDA(*r.DriverVersion)
	if err != nil {
		return probeAnswer{}, err
	}
	return probeAnswer{GPU: gpu, Driver: driver}, nil
}

// runProbe runs jetbake-cudaprobe at probe (a real path) on the library at
// lib (a real path) and reads its answer; when a driver call failed, it
// also returns the CUDA error the probe named (probeFailure).
func runProbe(ctx context.Context, probe, lib string, env Environ) (probeAnswer, string, error) {
	out, err := runTool(ctx, env, probe, lib)
	if err != nil {
		return probeAnswer{}, probeFailure(out), err
	}
	ans, err := parseProbeOutput(out)
	return ans, "", err
}

// probeFailure is the CUDA error's name (such as CUDA_ERROR_NO_DEVICE) in
// the line jetbake-cudaprobe prints on stdout when a driver call fails,
// {"step":"cuInit","error":"CUDA_ERROR_NO_DEVICE","code":100}; "" when
// there is none.
func probeFailure(out []byte) string {
	var f struct {
		Step  string `json:"step"`
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(firstLine(out)), &f) != nil || f.Step == "" || !strings.HasPrefix(f.Error, "CUDA_ERROR_") {
		return ""
	}
	return f.Error
}

// ProbeExists reports whether the probe at the real path p can be run.
func ProbeExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && host.Executable(fi)
}

// versionFlag asks jetbake-cudaprobe for cuDriverGetVersion alone.
const versionFlag = "--driver-version"

// runVersionProbe runs jetbake-cudaprobe --driver-version on the library
// at lib (a real path): it calls cuDriverGetVersion only, without cuInit.
func runVersionProbe(ctx context.Context, probe, lib string, env Environ) (computecap.CUDAVersion, error) {
	out, err := runTool(ctx, env, probe, versionFlag, lib)
	if err != nil {
		return computecap.CUDAVersion{}, err
	}
	return parseVersionOutput(out)
}

// cudaNoDevice is the CUresult a driver returns from cuInit when it sees no
// GPU: in a container, no GPU device node (CUDA's cuda.h, CUresult 100).
const cudaNoDevice = "CUDA_ERROR_NO_DEVICE"

// parseVersionOutput reads jetbake-cudaprobe --driver-version's line, such
// as {"driver_version":12060}.
func parseVersionOutput(out []byte) (computecap.CUDAVersion, error) {
	line := firstLine(out)
	var r probeResult
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return computecap.CUDAVersion{}, fmt.Errorf("probe printed %s, not its JSON line: %w", computecap.QuoteShort(line), err)
	}
	if r.DriverVersion == nil {
		return computecap.CUDAVersion{}, fmt.Errorf("probe printed %s without driver_version", computecap.QuoteShort(line))
	}
	return driverCUDA(*r.DriverVersion)
}

// driverCUDA turns cuDriverGetVersion's number (12060) into CUDA 12.6.
func driverCUDA(v int) (computecap.CUDAVersion, error) {
	if v < 1000 || v > 999_999 {
		return computecap.CUDAVersion{}, fmt.Errorf("probe reported driver version %d, which is not a CUDA version like 12060", v)
	}
	return computecap.CUDAVersion{Major: v / 1000, Minor: v % 1000 / 10}, nil
}
