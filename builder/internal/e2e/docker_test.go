package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/plan"
)

// TestDockerEngine loads the docker-tarball output of a build into a real
// Docker engine (Debian's docker.io, started here) and runs the images as an
// operator does, with fake host views standing in for `--runtime nvidia`.
func TestDockerEngine(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	nv, err := NewNVBed(ctx, filepath.Join(f.work, "nv"), f.env)
	require.NoError(t, err, "the runs through NVIDIA's runtime need its toolkit; they fail rather than skip")
	d, err := StartDockerd(ctx, filepath.Join(f.work, "dockerd"), WithRuntime("nvidia", nv.RuntimePath()))
	require.NoError(t, err, "the Docker-engine tests need dockerd; they fail rather than skip")
	t.Cleanup(func() { require.NoError(t, d.Close()) })

	p := f.demoPlan(t, "matrix.json")
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	releases := NVReleases()
	report, err := f.build(ctx, p, imagebuild.WithReleases(releases...), imagebuild.WithPush(true),
		imagebuild.WithOutputs(localoutput.Output{Type: "docker", Dest: filepath.Join(f.work, "out", "image.tar")}))
	require.NoError(t, err)

	images, digests := map[string]string{}, map[string]string{}
	for _, rr := range report.Releases {
		digests[rr.Name] = rr.Digest
		require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
		require.Len(t, rr.Outputs, 1)
		loaded, err := DockerLoad(ctx, d, rr.Outputs[0])
		require.NoError(t, err)
		rel, _ := p.Release(rr.Name)
		require.ElementsMatch(t, rel.Tags, loaded, "docker load names the image by every tag of the release")
		images[rr.Name] = rel.Tags[0]
	}

	t.Run("docker inspect shows the env, labels and entrypoint of the matrix", func(t *testing.T) {
		for _, name := range releases {
			rel, _ := p.Release(name)
			got, err := DockerImageInspect(ctx, d, images[name])
			require.NoError(t, err)
			checkDockerConfig(t, got, *rel)
		}
	})

	t.Run("each host runs the right binary or gets the sentence", func(t *testing.T) {
		hostsByName := f.hosts(t, "hosts")
		for _, o := range RunDockerChecks(ctx, d, images, hostsByName, DefaultChecks()) {
			require.Truef(t, o.OK(), "docker run %s on %s: %s\nstdout: %s\nstderr: %s",
				o.Release, o.Host, o.Summary(), o.Result.Stdout, o.Result.Stderr)
		}
	})

	t.Run("pick chooses the pushed image that runs on each host", func(t *testing.T) {
		hostsByName := f.hosts(t, "hosts-pick")
		want := map[string]string{"orin-jp6": "jetpack6.2", "orin-jp7.2": "jetpack7.2", "thor-jp7.2": "jetpack7.2",
			"thor-jp7.0": "jetpack7.0", "orin-jp6.0": "", "none": ""}
		for hostName, release := range want {
			opts := []imagepick.Option{imagepick.WithSysroot(hostsByName[hostName].Root)}
			if hostsByName[hostName].Root == "" {
				opts = []imagepick.Option{imagepick.WithSysroot(t.TempDir())}
			}
			res, err := imagepick.Pick(ctx, p.Repository, opts...)
			if release == "" {
				var nf *imagepick.NoFitError
				require.ErrorAs(t, err, &nf, hostName)
				t.Logf("%s: %s", hostName, nf.Sentence)
				continue
			}
			require.NoError(t, err, hostName)
			rel, _ := p.Release(release)
			require.Equal(t, rel.Tags[0]+"@"+digests[release], res.Best.Reference, hostName)
			t.Logf("%s: %s", hostName, res.Best.Reference)
		}
		// What operators type: docker run $(jetbake pick REPO), the image pulled by digest.
		res, err := imagepick.Pick(ctx, p.Repository, imagepick.WithSysroot(hostsByName["orin-jp6"].Root))
		require.NoError(t, err)
		out, err := d.Docker(ctx, DockerRunArgs(res.Best.Reference, hostsByName["orin-jp6"], nil, []string{"--port", "80"})...)
		require.NoError(t, err)
		require.Equal(t, 0, out.ExitCode, out.Stderr)
		require.Contains(t, out.Stdout, "router built for sm_87 ")
	})

	t.Run("through NVIDIA's container runtime on every host line", func(t *testing.T) {
		testNVIDIARuntime(t, d, nv, images)
	})

	t.Run("the probe's serving check through NVIDIA's container runtime", func(t *testing.T) {
		// The Orin image built without jetson-compute-cap.sh, as upstream's
		// Dockerfile builds it: its router refuses the Orin at model load.
		variant, err := OnlyNoComputeCap(f.env.RepoRoot, filepath.Join(f.work, "dockerfiles"))
		require.NoError(t, err)
		rep, err := f.build(ctx, f.demoPlan(t, "no-compute-cap.json", variant),
			imagebuild.WithOutputs(localoutput.Output{Type: "docker", Dest: filepath.Join(f.work, "out", "no-compute-cap.tar")}))
		require.NoError(t, err)
		require.Equal(t, imagebuild.Succeeded, rep.Releases[0].Outcome, rep.Releases[0].Error)
		refusing, err := DockerLoad(ctx, d, rep.Releases[0].Outputs[0])
		require.NoError(t, err)
		testServeThroughNVIDIA(t, d, nv, serveImages{serving: images["jetpack6.2"], digest: digests["jetpack6.2"], refusing: refusing[0]}, f.work)
	})

	t.Run("arguments after the image name reach the router unchanged", func(t *testing.T) {
		hostsByName := f.hosts(t, "hosts-args")
		// Flags Docker would take for its own if they came before the image.
		args := []string{"--model-id", "BAAI/bge-small-en-v1.5", "--port", "8080", "-e", "X=1", "--json-output"}
		res, err := d.Docker(ctx, DockerRunArgs(images["jetpack7.2"], hostsByName["thor-jp7.2"], nil, args)...)
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, res.Stderr)
		require.Contains(t, strings.Split(res.Stdout, "\n"), "args: "+strings.Join(args, " "), res.Stdout)
		require.Contains(t, res.Stdout, "router built for sm_110 ")
	})
}

// checkDockerConfig compares what Docker reads from an image with what the
// plan promises: the entrypoint, NVIDIA's variables and every label. (Docker
// replaces any CMD with the arguments after the image name; the arguments
// test checks that they reach the router.)
func checkDockerConfig(t *testing.T, got DockerInspect, rel plan.Release) {
	t.Helper()
	require.Equal(t, "arm64", got.Architecture)
	require.Equal(t, "linux", got.Os)
	require.Equal(t, []string{imagebuild.EntrypointPath}, got.Config.Entrypoint, rel.Name)
	for _, e := range []string{"NVIDIA_REQUIRE_CUDA=cuda>=" + rel.CUDA, "NVIDIA_DISABLE_REQUIRE=true", "NVIDIA_VISIBLE_DEVICES=all",
		"NVIDIA_DRIVER_CAPABILITIES=compute,utility"} {
		require.Contains(t, got.Config.Env, e, rel.Name)
	}
	for k, v := range rel.Labels {
		require.Equal(t, v, got.Config.Labels[k], "%s: label %s", rel.Name, k)
	}
	require.Equal(t, rel.CUDA, got.Config.Labels["com.nvidia.cuda.version"])
	require.Equal(t, rel.JetPack, got.Config.Labels["io.jetbake.jetpack"])
}

// TestDockerdReportsWhyItCannotStart starts dockerd where it cannot run: the
// error must carry the reason from its log, not a timeout.
func TestDockerdReportsWhyItCannotStart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs without -short (make test)")
	}
	dir := t.TempDir()
	// The data root is a file: dockerd exits at once.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data"), nil, 0o644))
	_, err := StartDockerd(t.Context(), dir)
	require.ErrorContains(t, err, "dockerd exited while starting")
	require.ErrorContains(t, err, "dockerd log")

	_, err = StartDockerd(t.Context(), "/tmp/"+strings.Repeat("x", 80))
	require.ErrorContains(t, err, "too long for unix sockets")
}
