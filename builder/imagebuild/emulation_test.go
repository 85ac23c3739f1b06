package imagebuild

import (
	"fmt"
	"strings"
	"testing"

	"github.com/containerd/platforms"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/stretchr/testify/require"
)

// workers is a node's worker list, each worker's platforms native first.
func workers(lists ...[]string) []gateway.WorkerInfo {
	out := make([]gateway.WorkerInfo, len(lists))
	for i, ps := range lists {
		out[i].ID = fmt.Sprint(i)
		for _, p := range ps {
			out[i].Platforms = append(out[i].Platforms, platforms.MustParse(p))
		}
	}
	return out
}

func TestNativeArm64(t *testing.T) {
	tests := []struct {
		name    string
		workers []gateway.WorkerInfo
		native  bool
	}{
		// buildkitd on an x86 machine with QEMU's binfmt handlers.
		{"x86 with QEMU", workers([]string{"linux/amd64", "linux/amd64/v2", "linux/386", "linux/arm64", "linux/arm/v7"}), false},
		{"arm64 runner", workers([]string{"linux/arm64", "linux/arm/v7", "linux/arm/v6"}), true},
		{"arm64 with variant", workers([]string{"linux/arm64/v8"}), true},
		{"32-bit arm is not arm64", workers([]string{"linux/arm/v7", "linux/arm64"}), false},
		{"a second worker native arm64", workers([]string{"linux/amd64", "linux/arm64"}, []string{"linux/arm64"}), true},
		{"no worker", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.native, nativeArm64(tt.workers))
		})
	}
	require.Equal(t, "linux/amd64", nativePlatform(workers([]string{"linux/amd64", "linux/arm64"})))
	require.Equal(t, "", nativePlatform(nil))
}

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
	x86 := workers([]string{"linux/amd64", "linux/arm64"})
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
	jobs[1].noteEmulation("jetson", workers([]string{"linux/arm64"}))
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
