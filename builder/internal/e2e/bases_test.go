package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

// onlyJetPack62 keeps the jetpack6.2 release, with its build base replaced
// when buildBase is not empty.
func onlyJetPack62(buildBase string) func(map[string]any) {
	return func(m map[string]any) {
		for _, r := range m["releases"].([]any) {
			if r.(map[string]any)["name"] == "jetpack6.2" {
				if buildBase != "" {
					r.(map[string]any)["build_base"] = buildBase
				}
				m["releases"] = []any{r}
				return
			}
		}
	}
}

// jetpack62Base is a stand-in for a base of jetpack6.2 (Ubuntu 22.04's
// libssl and libcrypto, a CA bundle) holding CUDA cuda of flavour f.
func jetpack62Base(ref, cuda string, f computecap.Flavour, devel bool) standin.Base {
	return standin.Base{Ref: ref, CUDA: cuda, Flavour: f, Devel: devel, CABundle: true,
		Libs: []string{standin.SSLSoname("22.04"), standin.CryptoSoname("22.04")}}
}

// What the bases hold is read from the images themselves, on the real
// buildkitd and registry, through the jetbake CLI as a pipeline runs it.
func TestBaseContents(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	mirror := "nvcr.io=" + f.env.Registry

	t.Run("build refuses a base whose version.json says 12.2 for a 12.6 release", func(t *testing.T) {
		// Not in the table of Jetson facts, and its tag gives no hint:
		// validate passes it, the plan does not know it, the build reads it.
		const base = "nvcr.io/acme/jetson-devel:latest"
		path := f.demoPlanFile(t, "cuda122.json", onlyJetPack62(base))
		p, err := LoadPlan(path, AllowStandin(f.env.RepoRoot))
		require.NoError(t, err)
		_, err = f.env.PushStandins(ctx, p)
		require.NoError(t, err)
		_, err = f.env.Kit().Push(ctx, f.env.Registry, jetpack62Base(base, "12.2.140", computecap.FlavourTegra, true))
		require.NoError(t, err)

		code, _, errOut := jetbakeAllowed(ctx, f, "validate", "--matrix", path)
		require.Equal(t, 0, code, errOut)
		code, out, errOut := jetbakeAllowed(ctx, f, "plan", "--matrix", path, "--format", "json")
		require.Equal(t, 0, code, errOut)
		var planned plan.Plan
		require.NoError(t, json.Unmarshal([]byte(out), &planned))
		require.Equal(t, plan.UnknownUntilRead, planned.Releases[0].Bases[0].CUDA)

		metadata := filepath.Join(f.work, "cuda122-build.json")
		code, _, errOut = jetbakeAllowed(ctx, f, "build", "--matrix", path, "--addr", f.env.Daemon.Addr, "--mirror", mirror, "--push",
			"--metadata-file", metadata, "--entrypoint-dir", f.entrypointDir, "--progress", "plain")
		require.Equal(t, 1, code, errOut)
		want := "build base " + base + " holds Tegra CUDA 12.2.140 (read from /usr/local/cuda-12.2/version.json, " +
			"/usr/local/cuda-12.2/targets/aarch64-linux), but the release's cuda is 12.6: its routers would be compiled against CUDA 12.2; " +
			"use a base with CUDA 12.6 such as nvcr.io/nvidia/l4t-jetpack:r36.4.0, or correct the release's cuda"
		require.Contains(t, errOut, want)
		require.NotContains(t, errOut, "failed to solve", "jetbake's sentence, not BuildKit's wrapping of it")
		t.Logf("jetbake build: %s", want)

		var report imagebuild.Report
		data, err := os.ReadFile(metadata)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &report))
		rr := report.Releases[0]
		require.Equal(t, imagebuild.Failed, rr.Outcome)
		require.Empty(t, rr.Digest)
		require.Empty(t, rr.Tags)
		require.Equal(t, "tegra", rr.Bases[0].Flavour)
		require.Equal(t, "12.2.140", rr.Bases[0].CUDA)
		require.Equal(t, "12.6", rr.Bases[1].CUDA, "the runtime base was read too")
		for _, ph := range report.Timings.Phases {
			require.NotEqual(t, progress.PhaseRouter, ph.Name, "nothing was compiled")
		}
		for _, tag := range p.Releases[0].Tags {
			_, err := remote.Head(mustRef(t, tag))
			require.Error(t, err, "%s must not be tagged", tag)
		}
	})

	t.Run("lock --check fails when a base's contents change flavour under the same tag", func(t *testing.T) {
		const runtime = "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"
		path := f.demoPlanFile(t, "flavour.json", onlyJetPack62(""))
		p, err := LoadPlan(path, AllowStandin(f.env.RepoRoot))
		require.NoError(t, err)
		_, err = f.env.PushStandins(ctx, p)
		require.NoError(t, err)
		lockFile := filepath.Join(f.work, lock.DefaultFile)

		code, out, errOut := jetbakeAllowed(ctx, f, "lock", "--matrix", path, "--mirror", mirror)
		require.Equal(t, 0, code, errOut)
		require.Regexp(t, regexp.QuoteMeta(runtime)+`@sha256:[0-9a-f]{64}  Tegra CUDA 12\.6\n`, out)
		before, err := os.ReadFile(lockFile)
		require.NoError(t, err)
		lf, err := lock.Read(lockFile)
		require.NoError(t, err)
		was := lf.Bases[runtime]
		require.Equal(t, computecap.FlavourTegra, lf.Contents[runtime].Flavour)

		// The same tag now holds an SBSA CUDA of the same version.
		_, err = f.env.Kit().Push(ctx, f.env.Registry, jetpack62Base(runtime, "12.6", computecap.FlavourSBSA, false))
		require.NoError(t, err)
		code, _, errOut = jetbakeAllowed(ctx, f, "lock", "--check", "--matrix", path, "--mirror", mirror)
		require.Equal(t, 1, code)
		require.Regexp(t, regexp.QuoteMeta(runtime+" moved from "+was+" to ")+`sha256:[0-9a-f]{64}`+
			regexp.QuoteMeta(", and what it holds changed from Tegra CUDA 12.6 to SBSA CUDA 12.6; run 'jetbake lock' to pin the new digests after checking them"), errOut)
		t.Logf("jetbake lock --check: %s", strings.TrimSpace(errOut))

		// Locking it anew is refused, and the lock file is left as it was.
		code, _, errOut = jetbakeAllowed(ctx, f, "lock", "--matrix", path, "--mirror", mirror)
		require.Equal(t, 1, code)
		require.Contains(t, errOut, "release jetpack6.2: runtime base "+runtime+" holds SBSA CUDA 12.6 (read from /usr/local/cuda-12.6/version.json, "+
			"/usr/local/cuda-12.6/targets/sbsa-linux), but JetPack 6.2 needs Tegra CUDA: an SBSA CUDA build does not run on the Tegra GPU driver of "+
			"JetPack 6 and earlier; use a Tegra base such as nvcr.io/nvidia/l4t-jetpack:r36.4.0")
		require.Contains(t, errOut, "nothing was written")
		after, err := os.ReadFile(lockFile)
		require.NoError(t, err)
		require.Equal(t, string(before), string(after))

		// Without the lock file, the build reads the base and refuses it.
		require.NoError(t, os.Remove(lockFile))
		code, _, errOut = jetbakeAllowed(ctx, f, "build", "--matrix", path, "--addr", f.env.Daemon.Addr, "--mirror", mirror,
			"--entrypoint-dir", f.entrypointDir, "--progress", "quiet")
		require.Equal(t, 1, code)
		require.Contains(t, errOut, "jetpack6.2: runtime base "+runtime+" holds SBSA CUDA 12.6")
		require.Contains(t, errOut, "but JetPack 6.2 needs Tegra CUDA")
		require.Contains(t, errOut, "no tag was put on for this run")
	})
}

// jetbakeAllowed runs the jetbake CLI with the demo matrix's grant of the
// stand-in router (--allow fs.read).
func jetbakeAllowed(ctx context.Context, f *fixture, args ...string) (code int, stdout, stderr string) {
	return jetbake(ctx, append(args, f.allow()...)...)
}
