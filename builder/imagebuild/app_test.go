package imagebuild

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/imageconfig"
	"github.com/jetbake/jetbake/builder/imagebuild/internal/buildtest"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// appPlan is the plan of the matrix package's app matrix (OBLITERATUS on
// JetPack 6.2 and 7.0).
func appPlan(t *testing.T) *plan.Plan {
	t.Helper()
	data, err := os.ReadFile("../matrix/testdata/app-matrix.json")
	require.NoError(t, err)
	m, err := matrix.Parse(data)
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	return p
}

// An app's image.json is schema 2, kind app, with the command, the check
// (the framework), every target's path the command's and the family.
func TestImageDescriptionApp(t *testing.T) {
	p := appPlan(t)
	data, err := imageconfig.Description(p, p.Releases[0], "abc123")
	require.NoError(t, err)
	img, err := imagespec.Parse(data)
	require.NoError(t, err)
	require.Equal(t, imagespec.SchemaVersionApp, img.SchemaVersion)
	require.Equal(t, imagespec.KindApp, img.Kind)
	require.Equal(t, "obliteratus", img.Router)
	require.Equal(t, []string{"/opt/venv/bin/obliteratus"}, img.Command)
	require.Equal(t, "pytorch", img.Check)
	require.Equal(t, []imagespec.Target{{SM: "8.7", Path: "/opt/venv/bin/obliteratus"}}, img.Targets)
	require.Len(t, img.Family, 2)
	require.Equal(t, []string{"11.0"}, img.Family[1].Targets)
}

// The image's config keeps the app stage's (PATH into the venv, WORKDIR)
// and adds the entrypoint, the app's default arguments and the labels.
func TestAppConfig(t *testing.T) {
	p := appPlan(t)
	j := &releaseJob{opts: &options{epoch: testEpoch}, plan: p, release: p.Releases[0], dockerfile: "Dockerfile"}
	stage, err := json.Marshal(ocispecs.Image{Config: ocispecs.ImageConfig{
		Env: []string{"PATH=/opt/venv/bin:/usr/bin"}, WorkingDir: "/src", Entrypoint: []string{"/bin/sh"}}})
	require.NoError(t, err)
	data, err := j.appConfig(stage, map[string]string{matrix.KeyKind: matrix.KindApp})
	require.NoError(t, err)
	var img ocispecs.Image
	require.NoError(t, json.Unmarshal(data, &img))
	require.Equal(t, []string{EntrypointPath}, img.Config.Entrypoint)
	require.Equal(t, []string{"--help"}, img.Config.Cmd)
	require.Equal(t, "/src", img.Config.WorkingDir)
	require.Contains(t, img.Config.Env, "PATH=/opt/venv/bin:/usr/bin")
	require.Contains(t, img.Config.Env, "NVIDIA_REQUIRE_CUDA=cuda>=12.9")
	require.Equal(t, matrix.KindApp, img.Config.Labels[matrix.KeyKind])
	require.Equal(t, "arm64", img.Architecture)

	_, err = j.appConfig([]byte("{"), nil)
	require.ErrorContains(t, err, "stage app of Dockerfile: config is not valid JSON")
}

// An app release builds from its app's context and Dockerfile on its base,
// with the mirror and the lock's digest applied, and reports its kind.
func TestSelectJobsApp(t *testing.T) {
	p := appPlan(t)
	digest := "sha256:" + strings.Repeat("a", 64)
	b := New(nil, WithLocks(map[string]string{"nvcr.io/nvidia/pytorch:25.06-py3-igpu": digest}))
	jobs, err := b.selectJobs(p)
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	require.Equal(t, "nvcr.io/nvidia/pytorch:25.06-py3-igpu@"+digest, jobs[0].runtimeBase)
	require.Equal(t, "nvcr.io/nvidia/pytorch:25.08-py3", jobs[1].runtimeBase)
	require.Empty(t, jobs[0].buildBase)
	require.Equal(t, filepath.Dir(p.App.Dockerfile), jobs[0].dockerfileDir)
	require.Equal(t, p.App.Context, jobs[0].contextDir)

	rr := jobs[0].initialReport()
	require.Equal(t, matrix.KindApp, rr.Kind)
	require.Equal(t, []Base{{Role: "app", Ref: "nvcr.io/nvidia/pytorch:25.06-py3-igpu", Resolved: jobs[0].runtimeBase}}, rr.Bases)
}

// The emulation warning of an app's build speaks of its stage, not routers.
func TestNoteEmulationApp(t *testing.T) {
	p := appPlan(t)
	j := &releaseJob{opts: &options{}, plan: p, release: p.Releases[0]}
	j.timings = progress.NewRecorder()
	var warnings []string
	shareEmulationNotice([]*releaseJob{j}, func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }, nil, "")
	require.NoError(t, j.notePath("default", buildtest.Workers([]string{"linux/amd64", "linux/arm64"})))
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "the app's stage runs under QEMU emulation")
	require.NotContains(t, warnings[0], "router")
}
