package imagebuild

import (
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
)

// noteEmulation records whether the node that c runs on builds the
// release under emulation (its workers as the gateway lists them), and
// warns through the build's notice the first time one does.
func (j *releaseJob) noteEmulation(node string, workers []gateway.WorkerInfo) {
	native := emulation.NativePlatform(workers)
	emulated := !emulation.NativeArm64(workers)
	j.mu.Lock()
	j.emulated, j.buildPlatform = &emulated, native
	j.mu.Unlock()
	j.timings.NoteRelease(j.release.Name, native, emulated)
	if emulated && j.emulation != nil {
		j.emulation.Warn(node, native, j.isApp())
	}
}

// shareEmulationNotice gives every job one notice that warns through warn,
// ending with advice (Advice.Nodes).
func shareEmulationNotice(jobs []*releaseJob, warn func(format string, args ...any), advice string) {
	n := emulation.NewNotice(warn, advice)
	for _, j := range jobs {
		j.emulation = n
	}
}
