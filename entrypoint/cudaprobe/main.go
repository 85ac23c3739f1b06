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
// On failure it prints one line on stderr naming the step that failed,
// such as "cuInit failed: CUDA_ERROR_NO_DEVICE (100)", and one JSON line on
// stdout for the entrypoint to read,
//
//	{"step":"cuInit","error":"CUDA_ERROR_NO_DEVICE","code":100}
//
// (step "dlopen" or "dlsym" when the library cannot be used, without error
// and code), and exits 1 (2 for a usage error, with nothing on stdout).
//
// With --kernel before it, the probe runs a CUDA kernel on GPU 0 through the
// driver API, the check `jetbake-probe --kernel` records as
// cuda-kernel: it makes the device's primary context current (as the CUDA
// runtime does), has the driver JIT-compile a small hand-written PTX kernel
// (ptx.go: y[i] = a*x[i] + b over 4096 floats, .target sm_50) for the GPU's
// own SM with cuModuleLoadDataEx, allocates, copies, launches, synchronises,
// copies back and frees, and checks that every value is finite and exactly
// the expected one. It prints one JSON line, pass or not:
//
//	{"pass":true,"sm":"8.7","driver_version":12060,"kernel":"jetbake_axpb","ptx_target":"sm_50","elements":4096,"jit_ms":1.2,"kernel_ms":0.05,"total_ms":260.4}
//
// and on failure also "step", "error" and "code" (the call that failed and
// its CUresult, such as cuModuleLoadDataEx and CUDA_ERROR_INVALID_PTX), or
// step "results" with "wrong", "non_finite" and "first_bad"; it then exits 1
// and says on stderr what failed, followed by the JIT's error log when the
// driver wrote one.
//
// jetbake-entrypoint and jetbake-probe run it; see jetbake-entrypoint's
// documentation for why the driver query lives in a separate binary. It is built with CGO_ENABLED=0 and
// loads the library with purego, so it needs the system's dynamic loader,
// which every CUDA image has, but no C toolchain to build.
package main

import (
	"encoding/json"
	"errors"
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

// failureResult is the line the probe prints on stdout when the library
// cannot be used or a driver call fails; the entrypoint reads the CUDA
// error from it (CUDA_ERROR_NO_DEVICE: the driver sees no GPU).
type failureResult struct {
	// Step is the driver call that failed, as the stderr line names it, or
	// "dlopen" or "dlsym".
	Step string `json:"step"`
	// Error and Code are the call's CUresult; Error is empty when neither
	// the driver nor the probe knows the code's name.
	Error string `json:"error,omitempty"`
	Code  int    `json:"code,omitempty"`
}

// failureOf is the line for err, an error of probe or driverVersion.
func failureOf(err error) failureResult {
	var ce *callError
	var me *missingError
	switch {
	case errors.As(err, &ce):
		return failureResult{Step: ce.call, Error: ce.name, Code: int(ce.code)}
	case errors.As(err, &me):
		return failureResult{Step: "dlsym"}
	}
	return failureResult{Step: "dlopen"}
}

// usage is the one-line usage, printed on a usage error.
const usage = "usage: jetbake-cudaprobe [--driver-version | --kernel] /path/to/libcuda.so.1"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run probes the library named by args and reports to stdout or stderr; it
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	mode := ""
	if len(args) > 0 {
		switch args[0] {
		case "-h", "--help":
			fmt.Fprintln(stdout, usage+"\n\nAsks the CUDA driver at the path for GPU 0's compute capability and its CUDA version"+
				" (--driver-version: the version alone, without cuInit), or with --kernel runs a small PTX kernel on GPU 0"+
				" and checks every value. It prints one JSON line.")
			return 0
		case "--driver-version", "--kernel":
			mode, args = args[0], args[1:]
		}
	}
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var res any
	var err error
	switch mode {
	case "--kernel":
		return kernelMain(args[0], stdout, stderr)
	case "--driver-version":
		res, err = driverVersion(args[0])
	default:
		res, err = probe(args[0])
	}
	if err != nil {
		printLine(failureOf(err), stdout, stderr)
		fmt.Fprintln(stderr, err)
		return 1
	}
	return printLine(res, stdout, stderr)
}

// kernelMain runs the kernel check, prints its line and says on stderr what
// failed; it returns 0 for a pass and 1 otherwise.
func kernelMain(path string, stdout, stderr io.Writer) int {
	res, said := runKernel(path)
	if code := printLine(res, stdout, stderr); code != 0 || res.Pass {
		return code
	}
	msg := res.describe()
	if res.Code == 0 && res.Step != "results" && said != "" {
		msg, said = said, ""
	}
	fmt.Fprintln(stderr, msg)
	if said != "" {
		fmt.Fprintln(stderr, said)
	}
	return 1
}

// printLine writes res as one JSON line.
func printLine(res any, stdout, stderr io.Writer) int {
	line, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}
