package imagebuild

import (
	"fmt"

	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
)

// notePath chooses the router stage's path on the node that c runs on (its
// workers as the gateway lists them; emulation.ChoosePath), records it and
// whether the release builds under emulation, says the path once per
// release and warns through the build's notice the first time a release
// builds under QEMU.
func (j *releaseJob) notePath(node string, workers []gateway.WorkerInfo) error {
	forced := j.forcedPath()
	choice, err := emulation.ChoosePath(workers, j.crossBase != "", forced)
	if err != nil {
		return fmt.Errorf("release %s on %s: %w", j.release.Name, node, err)
	}
	native := emulation.NativePlatform(workers)
	emulated := choice.Path == emulation.PathQEMU
	j.mu.Lock()
	j.emulated, j.buildPlatform, j.path = &emulated, native, choice
	said := j.pathSaid
	j.pathSaid = true
	j.mu.Unlock()
	j.timings.NoteRelease(j.release.Name, native, string(choice.Path), emulated)
	if choice.Path == emulation.PathCross {
		j.timings.NoteCrossBase(j.release.Name, j.crossBaseName())
	}
	if !said && j.say != nil && !j.isApp() {
		j.say("[%s] build path on %s: %s", j.release.Name, node, emulation.Describe(choice, j.crossBaseName(), j.release.CUDATargetDir))
	}
	if emulated && j.emulation != nil {
		j.emulation.Warn(node, native, j.isApp())
	}
	return nil
}

// forcedPath is the path the build forces (emulation.Forced).
func (j *releaseJob) forcedPath() string {
	return emulation.Forced(j.release.BuildPath, j.opts.buildPath, j.isApp())
}

// buildPath is the path the latest attempt chose.
func (j *releaseJob) buildPath() emulation.Choice {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.path
}

// shareEmulationNotice gives every job one notice that warns through warn,
// ending with advice (Advice.Nodes), say, which says each release's path
// (and a remembered verdict), and warn for the job's other warnings.
func shareEmulationNotice(jobs []*releaseJob, warn, say func(format string, args ...any), advice string) {
	n := emulation.NewNotice(warn, advice)
	for _, j := range jobs {
		j.emulation, j.say, j.warn = n, say, warn
	}
}
