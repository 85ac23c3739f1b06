package imagebuild

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/internal/buildtest"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// The warning comes once per build, naming arm64 runners and ending with
// the caller's advice on adding nodes; the
// report and the timings say per release whether it ran emulated.
func TestNoteEmulation(t *testing.T) {
	jobs := []*releaseJob{{release: testPlan().Releases[0], plan: testPlan(), opts: &options{}},
		{release: testPlan().Releases[1], plan: testPlan(), opts: &options{}}}
	rec := progress.NewRecorder()
	var warnings, said []string
	for _, j := range jobs {
		j.timings = rec
	}
	shareEmulationNotice(jobs, func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) },
		func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }, "with NODES")
	x86 := buildtest.Workers([]string{"linux/amd64", "linux/arm64"})
	require.NoError(t, jobs[0].notePath("default", x86))
	require.NoError(t, jobs[1].notePath("default", x86))
	require.Len(t, warnings, 1)
	for _, want := range []string{"BuildKit node default", "linux/amd64", "QEMU", "ubuntu-24.04-arm"} {
		require.Contains(t, warnings[0], want)
	}
	require.True(t, strings.HasSuffix(warnings[0], "your own arm64 or Jetson BuildKit nodes with NODES"), warnings[0])
	rr := jobs[0].initialReport()
	require.NotNil(t, rr.Emulated)
	require.True(t, *rr.Emulated)
	require.Equal(t, "linux/amd64", rr.BuildPlatform)
	require.Equal(t, "qemu", rr.BuildPath)

	// Retried on an arm64 node: not emulated, no second warning, the path
	// said once per release.
	require.NoError(t, jobs[1].notePath("jetson", buildtest.Workers([]string{"linux/arm64"})))
	require.Len(t, warnings, 1)
	rr = jobs[1].initialReport()
	require.False(t, *rr.Emulated)
	require.Equal(t, "linux/arm64", rr.BuildPlatform)
	require.Equal(t, "native", rr.BuildPath)
	require.Len(t, said, 2)
	require.Contains(t, said[0], "[jetpack6.2] build path on default: QEMU: the node does not run linux/arm64 natively")

	timings := rec.Result()
	require.Equal(t, []progress.ReleaseTiming{
		{Name: "jetpack6.2", BuildPlatform: "linux/amd64", BuildPath: "qemu", Emulated: true},
		{Name: "jetpack7.2", BuildPlatform: "linux/arm64", BuildPath: "native", Emulated: false},
	}, timings.Releases)

	var fresh releaseJob
	require.Nil(t, fresh.initialReport().Emulated, "unknown until the build starts")
}

// On an amd64 node a release with a cross build base takes the cross
// path: no QEMU warning, and its router stage gets Dockerfile-jetson's
// toolchain-cross stage, the cross base and the CUDA folder. --build-path
// qemu (WithBuildPath) takes QEMU instead; cross without a cross base is
// refused before anything is solved.
func TestNotePathCross(t *testing.T) {
	p := testPlan()
	rel := p.Releases[0]
	rel.CrossBuildBase, rel.CUDATargetDir = "nvcr.io/nvidia/jetpack-linux-aarch64-crosscompile-x86:6.2", "aarch64-linux"
	x86 := buildtest.Workers([]string{"linux/amd64", "linux/arm64"})
	newJob := func(o options) (*releaseJob, *[]string, *[]string) {
		j := &releaseJob{release: rel, plan: p, opts: &o, crossBase: "127.0.0.1:5000/cross@sha256:aa"}
		j.timings = progress.NewRecorder()
		var warnings, said []string
		shareEmulationNotice([]*releaseJob{j}, func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) },
			func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }, "")
		return j, &warnings, &said
	}

	j, warnings, said := newJob(options{})
	require.NoError(t, j.notePath("default", x86))
	require.Empty(t, *warnings)
	require.Equal(t, []string{"[jetpack6.2] build path on default: cross in 127.0.0.1:5000/cross@sha256:aa (targets/aarch64-linux): " +
		"the node is linux/amd64 and the release has a cross_build_base"}, *said)
	args := j.routerArgs(rel.Targets[0], "build-base")
	require.Equal(t, "toolchain-cross", args["TOOLCHAIN"])
	require.Equal(t, "127.0.0.1:5000/cross@sha256:aa", args["CROSS_BUILD_BASE"])
	require.Equal(t, "aarch64-linux", args["CUDA_TARGET_DIR"])
	rr := j.initialReport()
	require.False(t, *rr.Emulated)
	require.Equal(t, "cross", rr.BuildPath)

	j, warnings, _ = newJob(options{buildPath: "qemu"})
	require.NoError(t, j.notePath("default", x86))
	require.Len(t, *warnings, 1)
	require.NotContains(t, j.routerArgs(rel.Targets[0], "build-base"), "TOOLCHAIN")

	// The matrix forces QEMU; --build-path auto chooses anew.
	rel.BuildPath = "qemu"
	j, _, _ = newJob(options{buildPath: BuildPathAuto})
	require.NoError(t, j.notePath("default", x86))
	require.Equal(t, "cross", string(j.buildPath().Path))

	rel.CrossBuildBase, rel.BuildPath = "", ""
	j, _, _ = newJob(options{buildPath: "cross"})
	j.crossBase = ""
	err := j.notePath("default", x86)
	require.ErrorContains(t, err, `release jetpack6.2 on default: build_path "cross": the release has no cross_build_base`)
}

// jetbake build pins a release's cross build base to the lock file's
// digest, with --mirror applied, as it pins the build and runtime bases.
func TestCrossBasePinnedByLock(t *testing.T) {
	p := testPlan()
	const cross = "nvcr.io/nvidia/jetpack-linux-aarch64-crosscompile-x86:6.2"
	p.Releases[0].CrossBuildBase, p.Releases[0].CUDATargetDir = cross, "aarch64-linux"
	digest := "sha256:" + strings.Repeat("c", 64)
	b := New(nil, WithMirrors(refs.Mirrors{"nvcr.io": "127.0.0.1:5000"}), WithLocks(map[string]string{cross: digest}))
	jobs, err := b.selectJobs(p)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:5000/nvidia/jetpack-linux-aarch64-crosscompile-x86:6.2@"+digest, jobs[0].crossBase)
	require.Empty(t, jobs[1].crossBase, "a release without one")
}

// A release whose cross_build_base names the recipe: its router stage
// starts from the named context the recipe's base is handed over as, the
// path line and the report say which base, and on the QEMU path nothing
// of the recipe reaches the router stage.
func TestNotePathCrossRecipe(t *testing.T) {
	p := testPlan()
	rel := p.Releases[0]
	rel.CrossBuildBase, rel.CUDATargetDir = "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04", "aarch64-linux"
	rel.CrossBuildRecipe = &plan.CrossRecipe{Dockerfile: "jetbake", Args: map[string]string{"CUDA_DEVEL_IMAGE": rel.CrossBuildBase}}
	x86 := buildtest.Workers([]string{"linux/amd64", "linux/arm64"})
	j := &releaseJob{release: rel, plan: p, opts: &options{}, crossBase: "127.0.0.1:5000/nvidia/cuda:12.6.3-devel-ubuntu22.04@sha256:aa"}
	j.timings = progress.NewRecorder()
	var said []string
	shareEmulationNotice([]*releaseJob{j}, func(string, ...any) {}, func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }, "")
	require.NoError(t, j.notePath("default", x86))
	require.Equal(t, []string{"[jetpack6.2] build path on default: cross in the base jetbake's Dockerfile-cross-base builds FROM " +
		"127.0.0.1:5000/nvidia/cuda:12.6.3-devel-ubuntu22.04@sha256:aa (targets/aarch64-linux): the node is linux/amd64 and the release has a cross_build_base"}, said)
	args := j.routerArgs(rel.Targets[0], "build-base")
	require.Equal(t, "toolchain-cross", args["TOOLCHAIN"])
	require.Equal(t, "jetbake-cross-base", args["CROSS_BUILD_BASE"], "the named context, not the devel image")
	rr := j.initialReport()
	const base = "the base jetbake's Dockerfile-cross-base builds FROM 127.0.0.1:5000/nvidia/cuda:12.6.3-devel-ubuntu22.04@sha256:aa"
	require.Equal(t, base, rr.CrossBuildBase)
	// --timings says it too, in its JSON and below its release table.
	timings := j.timings.Result()
	require.Len(t, timings.Releases, 1)
	require.Equal(t, base, timings.Releases[0].CrossBuildBase)
	var table bytes.Buffer
	require.NoError(t, timings.WriteTable(&table))
	require.Contains(t, table.String(), "\njetpack6.2: cross in "+base+"\n")

	q := &releaseJob{release: rel, plan: p, opts: &options{buildPath: "qemu"}, crossBase: j.crossBase}
	q.timings = progress.NewRecorder()
	shareEmulationNotice([]*releaseJob{q}, func(string, ...any) {}, func(string, ...any) {}, "")
	require.NoError(t, q.notePath("default", x86))
	require.NotContains(t, q.routerArgs(rel.Targets[0], "build-base"), "CROSS_BUILD_BASE")
	require.Empty(t, q.initialReport().CrossBuildBase)
}
