// Command jetbake-cudaprobe asks the CUDA driver for the compute capability of
// GPU 0 and the driver's CUDA version, and prints them as one JSON line:
//
//	{"major":8,"minor":7,"driver_version":12060}
//
// Its argument is the path of the driver library (libcuda.so.1) to load.
// With --driver-version before it, the probe calls cuDriverGetVersion alone,
// which needs no cuInit and so costs no GPU initialisation, and prints
// {"driver_version":12060}: the entrypoint's fast start on a Jetson, whose
// SM comes from the table of Jetson facts.
// On failure it prints one line naming the step that failed, such as
// "cuInit failed: CUDA_ERROR_NO_DEVICE (100)", and exits 1 (2 for a usage
// error).
//
// jetbake-entrypoint runs it; see that command's documentation for why the
// driver query lives in a separate binary. It is built with CGO_ENABLED=0 and
// loads the library with purego, so it needs the system's dynamic loader,
// which every CUDA image has, but no C toolchain to build.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// result is the line the probe prints on success.
type result struct {
	// Major and Minor are the compute capability of device 0.
	Major int `json:"major"`
	Minor int `json:"minor"`
	// DriverVersion is cuDriverGetVersion's answer, 1000*major + 10*minor (12060 is CUDA 12.6).
	DriverVersion int `json:"driver_version"`
}

// versionResult is the line the probe prints with --driver-version.
type versionResult struct {
	// DriverVersion is cuDriverGetVersion's answer.
	DriverVersion int `json:"driver_version"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run probes the library named by args and reports to stdout or stderr; it
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	versionOnly := len(args) == 2 && args[0] == "--driver-version"
	if versionOnly {
		args = args[1:]
	}
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintln(stderr, "usage: jetbake-cudaprobe [--driver-version] /path/to/libcuda.so.1")
		return 2
	}
	var res any
	var err error
	if versionOnly {
		res, err = driverVersion(args[0])
	} else {
		res, err = probe(args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	line, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}
