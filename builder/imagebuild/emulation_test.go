package imagebuild

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/internal/buildtest"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// The warning comes once per build, naming arm64 runners and ending with
// the caller's advice on adding nodes; the
// report and the timings say per release whether it ran emulated.
func TestNoteEmulation(t *testing.T) {
	jobs := []*releaseJob{{release: testPlan().Releases[0], plan: testPlan()}, {release: testPlan().Releases[1], plan: testPlan()}}
	rec := progress.NewRecorder()
	var warnings []string
	for _, j := range jobs {
		j.timings = rec
	}
	shareEmulationNotice(jobs, func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }, "with NODES")
	x86 := buildtest.Workers([]string{"linux/amd64", "linux/arm64"})
	jobs[0].noteEmulation("default", x86)
	jobs[1].noteEmulation("default", x86)
	require.Len(t, warnings, 1)
	for _, want := range []string{"BuildKit node default", "linux/amd64", "QEMU", "ubuntu-24.04-arm"} {
		require.Contains(t, warnings[0], want)
	}
	require.True(t, strings.HasSuffix(warnings[0], "your own arm64 or Jetson BuildKit nodes with NODES"), warnings[0])
	rr := jobs[0].initialReport()
	require.NotNil(t, rr.Emulated)
	require.True(t, *rr.Emulated)
	require.Equal(t, "linux/amd64", rr.BuildPlatform)

	// Retried on an arm64 node: not emulated, no second warning.
	jobs[1].noteEmulation("jetson", buildtest.Workers([]string{"linux/arm64"}))
	require.Len(t, warnings, 1)
	rr = jobs[1].initialReport()
	require.False(t, *rr.Emulated)
	require.Equal(t, "linux/arm64", rr.BuildPlatform)

	timings := rec.Result()
	require.Equal(t, []progress.ReleaseTiming{
		{Name: "jetpack6.2", BuildPlatform: "linux/amd64", Emulated: true},
		{Name: "jetpack7.2", BuildPlatform: "linux/arm64", Emulated: false},
	}, timings.Releases)

	var fresh releaseJob
	require.Nil(t, fresh.initialReport().Emulated, "unknown until the build starts")
}
