// Command router is the stand-in text-embeddings-router: a real aarch64
// program, built with cgo through Debian's cross compiler and linked as
// TEI's router is for its linking mode (libcuda.so.1, libssl.so.3,
// libcrypto.so.3, and for dynamic linking CUDA's libraries), so that the
// dynamic loader refuses to start it where a library is missing. It is a
// template: the stand-in cargo appends the build's facts (package tei),
// which it reads back from /proc/self/exe, and runs TEI's start-up with
// them (tei.RunRouter): the CPU it was tuned for, --version, the
// compute-cap gate through the CUDA driver, and with a local model folder
// TEI's HTTP API until SIGTERM.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/jetbake/jetbake/builder/internal/standin/tei"
)

func main() {
	facts, err := tei.ReadFacts("/proc/self/exe")
	if err != nil {
		fmt.Fprintln(os.Stderr, "text-embeddings-router:", err)
		os.Exit(70)
	}
	// TEI shuts its server down gracefully on SIGTERM (docker stop) and
	// Ctrl-C; as PID 1 of a container it must handle them to end at all.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := tei.RunRouter(facts, tei.RouterEnv{Args: os.Args[1:], Getenv: os.Getenv, CPU: currentCPU(),
		Driver: driver{}, Stdout: os.Stdout, Stderr: os.Stderr, Context: ctx})
	stop()
	if code == tei.ExitIllegalInstruction {
		dieIllegalInstruction()
	}
	os.Exit(code)
}

// currentCPU is the CPU the router runs on as the container sees it:
// /proc/cpuinfo's Features (a Jetson's, or a fake host's bound over it as
// LXCFS does), else the auxiliary vector (under QEMU's user-mode emulator,
// whose /proc/cpuinfo is the x86 host's, the emulated CPU).
func currentCPU() []string {
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if f, ok := tei.FeaturesFromCPUInfo(string(data)); ok {
			return f
		}
	}
	auxv, _ := os.ReadFile("/proc/self/auxv")
	return tei.FeaturesFromAuxv(auxv)
}

// dieIllegalInstruction ends the process as a CPU ends one that ran an
// instruction it lacks: by SIGILL, exit status 132 to a shell or
// `docker run`. A process that is PID 1 of its namespace (the router, once
// the entrypoint execs it) cannot die by a signal it sends itself (the
// kernel drops it; only a real fault is forced on it), and under QEMU every
// guest fault becomes such a signal, so PID 1 exits with the status the
// runtime would report, 128 + SIGILL.
func dieIllegalInstruction() {
	if os.Getpid() == 1 {
		os.Exit(128 + 4)
	}
	raiseSIGILL()
	os.Exit(128 + 4)
}
