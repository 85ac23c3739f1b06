package imagebuild

import (
	"fmt"
	"sync"

	"github.com/containerd/platforms"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
)

// emulationNotice warns, once per build, that a router is about to be
// compiled under emulation: on a node with no worker that runs
// linux/arm64 natively, every compiler step of the router stage runs
// through QEMU, which takes hours for a real router where an arm64 machine
// takes minutes.
type emulationNotice struct {
	once sync.Once
	warn func(format string, args ...any)
	// advice ends the warning: how the caller adds arm64 nodes (Advice.Nodes).
	advice string
}

// noteEmulation records whether the node that c runs on compiles the
// release's routers under emulation, and warns the first time one does.
// BuildKit lists each worker's platforms with its native one first, then
// those it runs through binfmt emulators (worker/base's platform list,
// which the gateway hands on): on an x86 machine with QEMU, linux/amd64
// first and linux/arm64 later.
func (j *releaseJob) noteEmulation(node string, workers []gateway.WorkerInfo) {
	native := nativePlatform(workers)
	emulated := !nativeArm64(workers)
	j.mu.Lock()
	j.emulated, j.buildPlatform = &emulated, native
	j.mu.Unlock()
	j.timings.NoteRelease(j.release.Name, native, emulated)
	if !emulated || j.emulation == nil {
		return
	}
	j.emulation.once.Do(func() {
		what := "the routers compile under QEMU emulation, which takes hours for a real router build"
		if j.isApp() {
			what = "the app's stage runs under QEMU emulation, many times slower than on arm64, hours when pip compiles packages from source"
		}
		msg := fmt.Sprintf("jetbake: warning: BuildKit node %s has no worker that runs linux/arm64 natively (its native platform is %s): "+
			"%s. Build on an arm64 machine instead: "+
			"a GitHub-hosted arm64 runner (ubuntu-24.04-arm), or your own arm64 or Jetson BuildKit nodes", node, native, what)
		if a := j.emulation.advice; a != "" {
			msg += " " + a
		}
		j.emulation.warn("%s", msg)
	})
}

// nativeArm64 reports whether any worker's native platform, the first it
// lists, is linux/arm64.
func nativeArm64(workers []gateway.WorkerInfo) bool {
	for _, w := range workers {
		if len(w.Platforms) == 0 {
			continue
		}
		// Normalized, linux/arm64/v8 is linux/arm64.
		if p := platforms.Normalize(w.Platforms[0]); p.OS == "linux" && p.Architecture == "arm64" {
			return true
		}
	}
	return false
}

// nativePlatform is the native platform of the first worker, the one
// BuildKit builds on by default, e.g. "linux/amd64"; "" when none is listed.
func nativePlatform(workers []gateway.WorkerInfo) string {
	if len(workers) == 0 || len(workers[0].Platforms) == 0 {
		return ""
	}
	return platforms.Format(platforms.Normalize(workers[0].Platforms[0]))
}

// shareEmulationNotice gives every job one notice that warns through warn,
// ending with advice.
func shareEmulationNotice(jobs []*releaseJob, warn func(format string, args ...any), advice string) {
	n := &emulationNotice{warn: warn, advice: advice}
	for _, j := range jobs {
		j.emulation = n
	}
}
