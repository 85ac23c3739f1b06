package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/lock"
)

// TestCLIBuildWithLock drives `jetbake lock` and `jetbake build` as a
// pipeline would: pinned bases, a metadata file, a per-release cache, and a
// --check-lock that fails once a base tag has moved.
func TestCLIBuildWithLock(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p := f.demoPlan(t, "matrix.json")
	_, err := f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	matrixPath := filepath.Join(f.work, "matrix.json")
	mirror := "nvcr.io=" + f.env.Registry
	run := func(args ...string) (int, string, string) {
		return jetbake(ctx, append(append(args, "--matrix", matrixPath), f.allow()...)...)
	}

	code, out, errOut := run("lock", "--mirror", mirror, "--format", "json")
	require.Equal(t, 0, code, errOut)
	var lf lock.File
	require.NoError(t, json.Unmarshal([]byte(out), &lf))
	require.Len(t, lf.Bases, len(standin.ForPlan(p)))
	require.FileExists(t, filepath.Join(f.work, lock.DefaultFile))

	metadata := filepath.Join(f.work, "build.json")
	cacheDir := filepath.Join(f.work, "cache")
	code, _, errOut = run("build", "--addr", f.env.Daemon.Addr, "--mirror", mirror, "--push",
		"--release", "jetpack6.2", "--metadata-file", metadata, "--entrypoint-dir", f.entrypointDir,
		"--cache-to", "type=local,dest="+cacheDir, "--progress", "plain", "--check-lock")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "[jetpack6.2]", "progress names the release")
	var report imagebuild.Report
	data, err := os.ReadFile(metadata)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &report))
	require.Len(t, report.Releases, 1)
	rr := report.Releases[0]
	require.Equal(t, imagebuild.Succeeded, rr.Outcome)
	require.NotEmpty(t, rr.Tags)
	for _, b := range rr.Bases {
		require.Equal(t, lf.Bases[b.Ref], b.Digest, "%s base was built from its locked digest", b.Role)
		require.Contains(t, b.Resolved, "@"+lf.Bases[b.Ref])
		// What the lock read at that digest: Tegra CUDA 12.6, as the stand-ins hold.
		require.Equal(t, "tegra", b.Flavour, b.Ref)
		require.Equal(t, "12.6", b.CUDA, b.Ref)
		require.Equal(t, lf.Contents[b.Ref].From, b.ReadFrom, b.Ref)
	}
	require.FileExists(t, filepath.Join(cacheDir, "jetpack6.2", "index.json"), "one cache per release")

	// Move the runtime base's tag: the lock is now stale.
	moved := standin.Base{Ref: "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime", CUDA: "12.6.99"}
	_, err = f.env.Kit().Push(ctx, f.env.Registry, moved)
	require.NoError(t, err)
	code, _, errOut = run("build", "--addr", f.env.Daemon.Addr, "--mirror", mirror, "--check-lock",
		"--release", "jetpack6.2", "--entrypoint-dir", f.entrypointDir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime moved from")

	code, _, errOut = run("build", "--addr", f.env.Daemon.Addr, "--release", "nope", "--entrypoint-dir", f.entrypointDir)
	require.Equal(t, 2, code, "an unknown release is bad input, found before the daemon is used")
	require.Contains(t, errOut, `--release: unknown release "nope": the matrix has`)
}
