package tei

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/entrypoint/cudaspec"
)

// Driver is the CUDA driver API the router's compute-cap gate calls
// (libcuda.so.1; cudarc's driver::result::init and CudaDevice attributes).
type Driver interface {
	// Init is cuInit(0); it returns a CUresult.
	Init() int
	// ComputeCapability is cuDeviceGet(0), then cuDeviceGetAttribute 75
	// (major) and 76 (minor); rc is the first failing CUresult.
	ComputeCapability() (major, minor, rc int)
}

// RouterEnv is what the router reads at start besides its Facts.
type RouterEnv struct {
	// Args are its arguments, Getenv its environment.
	Args   []string
	Getenv func(string) string
	// CPU is the CPU it runs on (/proc/cpuinfo, else the auxiliary vector).
	CPU []string
	// Driver is libcuda, which the loader has already found.
	Driver Driver
	// Stdout and Stderr take its output.
	Stdout, Stderr io.Writer
	// Context ends a serving router gracefully: cmd/router cancels it on
	// SIGTERM or SIGINT, as TEI's shutdown_signal waits for either. Nil
	// serves until the process ends.
	Context context.Context
}

// context is e.Context, or one that never ends.
func (e RouterEnv) context() context.Context {
	if e.Context == nil {
		return context.Background()
	}
	return e.Context
}

// ExitIllegalInstruction is returned by RunRouter when the CPU lacks a
// feature the code was compiled for: the program must then die by SIGILL,
// as the real binary would on its first such instruction.
const ExitIllegalInstruction = -4

// RunRouter is the stand-in router's start-up, as TEI's: --version without
// CUDA. With --model-id naming a local folder (or MODEL_ID), it is TEI
// serving that model (serveModel): the folder read with TEI's errors, the
// compute-cap gate of the candle CUDA backend, the load, then TEI's HTTP
// routes on --hostname and --port (PORT, else 3000) until SIGTERM.
// Otherwise (no model, or a Hub id, which TEI would download and this
// offline stand-in cannot) it stops after the gate (cuInit failing means
// no usable GPU: TEI warns and carries on on the CPU; a GPU the compiled
// table refuses stops it with TEI's sentence) and prints the lines the
// tests read: the SM it was built for, the gate's verdict, its features,
// port and arguments. It returns the exit status.
func RunRouter(f BuildFacts, e RouterEnv) int {
	if len(Missing(f.CPUFeatures, e.CPU)) > 0 {
		return ExitIllegalInstruction
	}
	if slices.Contains(e.Args, "--version") || slices.Contains(e.Args, "-V") {
		fmt.Fprintf(e.Stdout, "%s %s\n", f.Package, f.Version)
		return 0
	}
	if a := readServeArgs(e); localModel(a.modelID) {
		return serveModel(f, e, a)
	}
	verdict := "no CUDA backend compiled in"
	if f.CUDA {
		_, v, ok := computeCapGate(f, e)
		if !ok {
			return 1
		}
		verdict = v
	}
	fmt.Fprintf(e.Stdout, "router built for sm_%d (SM %d), %s\n", f.ComputeCap, f.ComputeCap, verdict)
	fmt.Fprintf(e.Stdout, "features: %s\n", strings.Join(f.Features, ","))
	fmt.Fprintf(e.Stdout, "linking: %s\n", orNone(f.Linking))
	fmt.Fprintf(e.Stdout, "target cpu: %s\n", f.TargetCPU)
	fmt.Fprintf(e.Stdout, "version: %s %s, sha %s\n", f.Package, f.Version, orNone(f.GitSHA))
	fmt.Fprintf(e.Stdout, "listening on port %s\n", port(e))
	fmt.Fprintf(e.Stdout, "args: %s\n", strings.Join(e.Args, " "))
	fmt.Fprintf(e.Stdout, "LD_LIBRARY_PATH=%s\n", e.Getenv("LD_LIBRARY_PATH"))
	return 0
}

// computeCapGate is TEI's candle backend start: the runtime compute
// capability from the driver (0 when CUDA is not available and the router
// carries on on the CPU) against the compiled table.
func computeCapGate(f BuildFacts, e RouterEnv) (int, string, bool) {
	rc := e.Driver.Init()
	var major, minor int
	if rc == 0 {
		major, minor, rc = e.Driver.ComputeCapability()
	}
	if rc != 0 {
		fmt.Fprintf(e.Stdout, "WARN text_embeddings_backend_candle: Could not find a compatible CUDA device on host: CUDA is not available\n\nCaused by:\n    DriverError(%s, %q)\n", cuErrorName(rc), cuErrorString(rc))
		fmt.Fprintln(e.Stdout, "WARN text_embeddings_backend_candle: Using CPU instead")
		return 0, "running on the CPU", true
	}
	runtime := major*10 + minor
	if !f.Table.Accepts(runtime, f.ComputeCap) {
		fmt.Fprintf(e.Stderr, "Error: Could not create backend\n\nCaused by:\n    Could not start backend: Runtime compute cap %d is not compatible with compile time compute cap %d\n", runtime, f.ComputeCap)
		return runtime, "", false
	}
	return runtime, fmt.Sprintf("compute cap: runtime %d accepted by compile time %d", runtime, f.ComputeCap), true
}

// port is --port, else PORT, else TEI's default 3000.
func port(e RouterEnv) string {
	for i, a := range e.Args {
		if a == "--port" && i+1 < len(e.Args) {
			return e.Args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--port="); ok {
			return v
		}
	}
	if p := e.Getenv("PORT"); p != "" {
		return p
	}
	return "3000"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// cuErrorStrings are cuGetErrorString's texts of the CUresult values the
// stand-in driver returns. Their names are the driver's own, from the
// table jetbake-cudaprobe names errors with (cudaspec): the driver names
// no CUresult 35 (cudaErrorInsufficientDriver is the CUDA runtime's), so
// neither does the stand-in.
var cuErrorStrings = map[int]string{
	1:   "invalid argument",
	3:   "initialization error",
	34:  "CUDA driver is a stub library",
	100: "no CUDA-capable device is detected",
	101: "invalid device ordinal",
}

// cuErrorName is the driver's name of rc, as cudarc prints it, or
// CUresult(N) for a code the driver has no name for.
func cuErrorName(rc int) string {
	if name := cudaspec.DriverErrorName(int32(rc)); name != "" {
		return name
	}
	return "CUresult(" + strconv.Itoa(rc) + ")"
}

// cuErrorString is cuGetErrorString's text of rc.
func cuErrorString(rc int) string {
	if e, ok := cuErrorStrings[rc]; ok {
		return e
	}
	return "unknown error"
}
