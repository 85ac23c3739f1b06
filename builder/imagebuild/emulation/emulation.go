// Package emulation tells from a BuildKit node's workers whether it runs
// linux/arm64 natively, and warns once per build when it does not: every
// compiler step then runs through QEMU, which takes hours for a real
// router where an arm64 machine takes minutes.
package emulation

import (
	"fmt"
	"sync"

	"github.com/containerd/platforms"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// Notice warns, once per build, that a release is about to be built under
// emulation.
type Notice struct {
	once sync.Once
	warn func(format string, args ...any)
	// advice ends the warning: how the caller adds arm64 nodes.
	advice string
}

// NewNotice returns a notice that warns through warn, ending with advice.
func NewNotice(warn func(format string, args ...any), advice string) *Notice {
	return &Notice{warn: warn, advice: advice}
}

// Warn warns, the first time it is called, that node (native platform
// native) builds under emulation: an app's stage when app, else routers.
func (n *Notice) Warn(node, native string, app bool) {
	n.once.Do(func() {
		what := "the routers compile under QEMU emulation, which takes hours for a real router build"
		if app {
			what = "the app's stage runs under QEMU emulation, many times slower than on arm64, hours when pip compiles packages from source"
		}
		msg := fmt.Sprintf("jetbake: warning: BuildKit node %s has no worker that runs linux/arm64 natively (its native platform is %s): "+
			"%s. Build on an arm64 machine instead: "+
			"a GitHub-hosted arm64 runner (ubuntu-24.04-arm), or your own arm64 or Jetson BuildKit nodes", node, native, what)
		if n.advice != "" {
			msg += " " + n.advice
		}
		n.warn("%s", msg)
	})
}

// NativeArm64 reports whether any worker's native platform, the first it
// lists, is linux/arm64. BuildKit lists each worker's platforms with its
// native one first, then those it runs through binfmt emulators
// (worker/base's platform list, which the gateway hands on): on an x86
// machine with QEMU, linux/amd64 first and linux/arm64 later.
func NativeArm64(workers []gateway.WorkerInfo) bool {
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

// NativePlatform is the native platform of the first worker, the one
// BuildKit builds on by default, e.g. "linux/amd64"; "" when none is listed.
func NativePlatform(workers []gateway.WorkerInfo) string {
	if len(workers) == 0 || len(workers[0].Platforms) == 0 {
		return ""
	}
	return platforms.Format(platforms.Normalize(workers[0].Platforms[0]))
}

// BuildPlatform is the daemon's first worker's platform, the build
// platform of the stages jetbake converts.
func BuildPlatform(bopts gateway.BuildOpts) ocispecs.Platform {
	if w := bopts.Workers; len(w) > 0 && len(w[0].Platforms) > 0 {
		return w[0].Platforms[0]
	}
	return platforms.Normalize(platforms.DefaultSpec())
}
