package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// testEpoch is the SOURCE_DATE_EPOCH of every test build.
const testEpoch = 1767225600 // 2026-01-01

// fixture is a registry, a buildkitd and the entrypoint binaries for one run.
type fixture struct {
	env           *Env
	work          string
	entrypointDir string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: runs without -short (make test)")
	}
	ctx := t.Context()
	root, err := FindRepoRoot()
	require.NoError(t, err)
	// Sockets and state live in a per-run folder: two runs never collide.
	work := t.TempDir()
	env, err := Start(root, work)
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Close() })
	require.NoError(t, env.CheckPrerequisites(), "the end-to-end tests need their parts; they fail rather than skip")
	require.NoError(t, env.StartDaemon(ctx, filepath.Join(work, "buildkitd"), false))
	require.NoError(t, daemon.CheckPlatform(ctx, env.Daemon.Client, plan.Platform))
	epDir := filepath.Join(work, "linux-arm64")
	require.NoError(t, env.BuildEntrypoint(ctx, epDir))
	return &fixture{env: env, work: work, entrypointDir: epDir}
}

// demoPlan writes the demo matrix (with mutations) and plans it.
func (f *fixture) demoPlan(t *testing.T, file string, mutate ...func(map[string]any)) *plan.Plan {
	t.Helper()
	path := filepath.Join(f.work, file)
	require.NoError(t, WriteDemoMatrix(f.env.RepoRoot, f.env.Registry, path, mutate...))
	m, err := matrix.Load(path, AllowStandin(f.env.RepoRoot))
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	return p
}

// demoPlanFile writes the demo matrix (with mutations) and returns its path.
func (f *fixture) demoPlanFile(t *testing.T, file string, mutate ...func(map[string]any)) string {
	t.Helper()
	path := filepath.Join(f.work, file)
	require.NoError(t, WriteDemoMatrix(f.env.RepoRoot, f.env.Registry, path, mutate...))
	return path
}

// allow is the --allow flag that lets this fixture's demo matrices read
// the stand-in router, which lies outside the temporary folder they are in.
func (f *fixture) allow() []string { return AllowStandinFlags(f.env.RepoRoot) }

// hosts lays out the fake hosts under the run's folder dir.
func (f *fixture) hosts(t *testing.T, dir string) map[string]runimage.Host {
	t.Helper()
	h, err := WriteHosts(t.Context(), f.env.Kit().Cache, filepath.Join(f.work, dir))
	require.NoError(t, err)
	return h
}

// jetbake runs the jetbake CLI in this process, as a pipeline runs the
// binary, and returns its exit code, standard output and standard error.
func jetbake(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func (f *fixture) build(ctx context.Context, p *plan.Plan, opts ...imagebuild.Option) (*imagebuild.Report, error) {
	mirrors := refs.Mirrors{"nvcr.io": f.env.Registry}
	base := []imagebuild.Option{
		imagebuild.WithMirrors(mirrors), imagebuild.WithEntrypointDir(f.entrypointDir),
		imagebuild.WithSource("0123456789abcdef0123456789abcdef01234567", testEpoch), imagebuild.WithParallel(2),
	}
	return imagebuild.New(f.env.Daemon.Client, append(base, opts...)...).Build(ctx, p)
}

func TestEndToEnd(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	// The shipped releases and the declared JetPack 7.3 (DeclaredRelease).
	declared, err := WithDeclaredJetPack(f.work)
	require.NoError(t, err)
	p := f.demoPlan(t, "matrix.json", declared)
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	// Every release of the shipped matrix, from the shipped Dockerfile.
	report, err := f.build(ctx, p, imagebuild.WithPush(true))
	require.NoError(t, err)
	require.Len(t, report.Releases, len(p.Releases))
	tags := map[string]string{}
	for _, rr := range report.Releases {
		require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
		require.NotEmpty(t, rr.Digest)
		rel, _ := p.Release(rr.Name)
		require.ElementsMatch(t, rel.Tags, rr.Tags)
		tags[rr.Name] = rel.Tags[0]
	}

	t.Run("tags point at the built digests", func(t *testing.T) {
		for _, rr := range report.Releases {
			for _, tag := range rr.Tags {
				desc, err := remote.Head(mustRef(t, tag))
				require.NoError(t, err)
				require.Equal(t, rr.Digest, desc.Digest.String(), tag)
			}
		}
	})

	t.Run("the smoke run read each router's DT_NEEDED and loader", func(t *testing.T) {
		// Static linking needs only the driver of CUDA's libraries, but
		// candle-flash-attn (candle-cuda; not Xavier's candle-cuda-volta)
		// links libcudart of the CUDA major dynamically.
		ssl3 := func(cudart string) []string {
			return []string{"libcuda.so.1", cudart, "libssl.so.3", "libcrypto.so.3", "libgcc_s.so.1", "libstdc++.so.6", "libc.so.6"}
		}
		want := map[string][]string{"jetpack6.1/router-87": ssl3("libcudart.so.12"), "jetpack6.2/router-87": ssl3("libcudart.so.12"),
			"jetpack7.0/router-110": ssl3("libcudart.so.13"), "jetpack7.2/router-87": ssl3("libcudart.so.13"), "jetpack7.2/router-110": ssl3("libcudart.so.13"),
			"jetpack7.3/router-87": ssl3("libcudart.so.13"), "jetpack7.3/router-110": ssl3("libcudart.so.13"),
			"jetpack5.1/router-87": {"libcuda.so.1", "libcudart.so.11.0", "libssl.so.1.1", "libcrypto.so.1.1", "libgcc_s.so.1", "libstdc++.so.6", "libc.so.6"},
			"jetpack5.1/router-72": {"libcuda.so.1", "libssl.so.1.1", "libcrypto.so.1.1", "libgcc_s.so.1", "libstdc++.so.6", "libc.so.6"}}
		for _, rr := range report.Releases {
			require.Len(t, rr.Binaries, len(rr.Targets), rr.Name)
			for _, b := range rr.Binaries {
				require.Empty(t, b.NotELF, "%s %s", rr.Name, b.Binary)
				require.Equal(t, want[rr.Name+"/"+b.Binary], b.Needed, "%s %s", rr.Name, b.Binary)
				require.Equal(t, "/lib/ld-linux-aarch64.so.1", b.Interpreter)
			}
		}
	})

	t.Run("index, platform, annotations and labels", func(t *testing.T) {
		for _, rr := range report.Releases {
			if rr.Name == "jetpack7.2" {
				checkMetadata(t, rr, p)
			}
		}
	})

	t.Run("the declared JetPack 7.3 is built under QEMU, audited and marked declared", func(t *testing.T) {
		checkDeclaredRelease(t, report)
	})

	t.Run("the routers carry what their build compiled in", func(t *testing.T) {
		img := pullArm64(t, tags["jetpack5.1"])
		dir := t.TempDir()
		require.NoError(t, runimage.Unpack(img, dir))
		for bin, features := range map[string]string{"router-72": "candle-cuda-volta", "router-87": "candle-cuda"} {
			facts, err := tei.ReadFacts(filepath.Join(dir, "usr/local/bin", bin))
			require.NoError(t, err)
			require.Equal(t, []string{"cargo", "build", "--release", "--bin", "text-embeddings-router", "-F", features,
				"-F", "static-linking", "-F", "http", "--no-default-features"}, facts.Command, "TEI's Dockerfile-cuda line")
			require.Equal(t, tei.LinkStatic, facts.Linking)
			require.Equal(t, "generic", facts.TargetCPU, "no target-cpu: .cargo is not copied")
			require.Equal(t, "1.92.0", facts.Toolchain, "rust-toolchain.toml's")
			require.Equal(t, "06670157fb6c1523482219bdb2d1660277d38088", facts.GitSHA)
			require.True(t, facts.Table.Accepts(facts.ComputeCap, facts.ComputeCap), "jetson-compute-cap.sh's arm")
		}
	})

	t.Run("files in the image", func(t *testing.T) {
		img := pullArm64(t, tags["jetpack7.2"])
		files := imageFiles(t, img)
		for _, want := range []string{"usr/local/bin/router-87", "usr/local/bin/router-110",
			"usr/local/bin/jetbake-entrypoint", "usr/local/bin/jetbake-cudaprobe", "usr/local/bin/jetbake-probe", "etc/jetbake/image.json"} {
			require.Contains(t, files, want)
		}
		require.NotContains(t, files, "usr/local/bin/router-72")
	})

	t.Run("jetbake's own layer is the same in every image, the release's is not", func(t *testing.T) {
		top := func(tag string) (tool, release string) {
			layers, err := pullArm64(t, tag).Layers()
			require.NoError(t, err)
			require.Greater(t, len(layers), 2)
			d1, err := layers[len(layers)-2].Digest()
			require.NoError(t, err)
			d2, err := layers[len(layers)-1].Digest()
			require.NoError(t, err)
			return d1.String(), d2.String()
		}
		tool62, rel62 := top(tags["jetpack6.2"])
		tool72, rel72 := top(tags["jetpack7.2"])
		require.Equal(t, tool62, tool72, "the entrypoint and CUDA probe layer")
		require.NotEqual(t, rel62, rel72, "the routers and image.json layer")
		files := imageFiles(t, pullArm64(t, tags["jetpack6.2"]))
		require.Contains(t, files, "usr/local/bin/jetbake-entrypoint")
	})

	t.Run("images run the right binary on each host", func(t *testing.T) {
		hostsByName := f.hosts(t, "hosts")
		images, err := Images(ctx, filepath.Join(f.work, "rootfs"), tags)
		require.NoError(t, err)
		runner, err := runimage.NewRunner(filepath.Join(f.work, "bundles"))
		require.NoError(t, err)
		checks := append(append(DefaultChecks(), ReleaseChecks()...), DeclaredChecks()...)
		for _, o := range RunChecks(ctx, runner, images, hostsByName, checks) {
			require.Truef(t, o.OK(), "%s on %s: %s\nstdout: %s\nstderr: %s", o.Release, o.Host, o.Summary(), o.Result.Stdout, o.Result.Stderr)
		}
	})

	t.Run("a failing release leaves no tag", func(t *testing.T) {
		failing := f.demoPlan(t, "failing.json", withFailingRelease)
		rep, err := f.build(ctx, failing, imagebuild.WithPush(true), imagebuild.WithContinueOnError(true),
			imagebuild.WithReleases("jetpack6.1", "broken"))
		require.Error(t, err)
		outcomes := map[string]imagebuild.ReleaseReport{}
		for _, rr := range rep.Releases {
			outcomes[rr.Name] = rr
		}
		require.Equal(t, imagebuild.Failed, outcomes["broken"].Outcome)
		require.Contains(t, outcomes["broken"].Error, "none of the selected packages contains this feature: candle-cuda-nope", "cargo's own refusal")
		require.Equal(t, imagebuild.Untagged, outcomes["jetpack6.1"].Outcome)
		require.NotEmpty(t, outcomes["jetpack6.1"].Digest, "the good release is still pushed by digest")
		for _, name := range []string{"jetpack6.1", "broken"} {
			rel, _ := failing.Release(name)
			for _, tag := range rel.Tags {
				_, err := remote.Head(mustRef(t, tag))
				require.Error(t, err, "tag %s must not exist", tag)
			}
		}
	})

	t.Run("two clean builds give the same digests", func(t *testing.T) {
		first := map[string]string{}
		for _, rr := range report.Releases {
			first[rr.Name] = rr.Digest
		}
		require.NoError(t, f.env.Daemon.Client.Prune(ctx, nil, client.PruneAll))
		again, err := f.build(ctx, p, imagebuild.WithPush(true), imagebuild.WithReleases("jetpack6.2", "jetpack7.2"))
		require.NoError(t, err)
		require.Len(t, again.Releases, 2)
		for _, rr := range again.Releases {
			require.Equal(t, first[rr.Name], rr.Digest, rr.Name)
		}
	})

	t.Run("a passing verdict is remembered, by what it depends on", func(t *testing.T) { checkRememberedVerdicts(t, f, p) })

	t.Run("oci and docker outputs", func(t *testing.T) {
		out := filepath.Join(f.work, "out")
		rep, err := f.build(ctx, p, imagebuild.WithReleases("jetpack6.2"),
			imagebuild.WithOutputs(localoutput.Output{Type: "oci", Dest: filepath.Join(out, "oci")},
				localoutput.Output{Type: "docker", Dest: filepath.Join(out, "image.tar")}))
		require.NoError(t, err)
		require.Len(t, rep.Releases[0].Outputs, 2)
		require.FileExists(t, filepath.Join(out, "oci", "index.json"))
		st, err := os.Stat(filepath.Join(out, "image.tar"))
		require.NoError(t, err)
		require.Greater(t, st.Size(), int64(1000))
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			require.NotContains(t, e.Name(), "partial")
		}
	})
}

// withFailingRelease adds a release whose router build fails.
func withFailingRelease(m map[string]any) {
	rels := m["releases"].([]any)
	var base map[string]any
	for _, r := range rels {
		if r.(map[string]any)["name"] == "jetpack6.1" {
			base = r.(map[string]any)
		}
	}
	broken := map[string]any{}
	for k, v := range base {
		broken[k] = v
	}
	broken["name"] = "broken"
	broken["tags"] = []any{"broken-{jetpack}"}
	broken["build_args"] = map[string]any{"CARGO_FEATURES": "candle-cuda-nope"}
	m["releases"] = append(rels, broken)
	image := m["image"].(map[string]any)
	image["tags"] = []any{"{version}-{release}"}
	image["repository"] = image["repository"].(string) + "-failing" // its own: the shipped releases are tagged already
}

func checkMetadata(t *testing.T, rr imagebuild.ReleaseReport, p *plan.Plan) {
	t.Helper()
	ref := mustRef(t, rr.Repository+"@"+rr.Digest)
	idx, err := remote.Index(ref)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 1, "one platform, no unknown/unknown attestation entries")
	require.Equal(t, "arm64", im.Manifests[0].Platform.Architecture)
	require.Equal(t, "linux", im.Manifests[0].Platform.OS)
	rel, _ := p.Release(rr.Name)
	for _, k := range []string{"io.jetbake.jetpack", "io.jetbake.l4t", "io.jetbake.cuda", "io.jetbake.sm-targets", "io.jetbake.tier",
		"org.opencontainers.image.version", "org.opencontainers.image.title", "org.opencontainers.image.source"} {
		require.Equal(t, rel.Annotations[k], im.Annotations[k], "index annotation %s", k)
	}
	require.Equal(t, "8.7,11.0", im.Annotations["io.jetbake.sm-targets"])
	require.Equal(t, "0123456789abcdef0123456789abcdef01234567", im.Annotations["org.opencontainers.image.revision"])
	require.Equal(t, time.Unix(testEpoch, 0).UTC().Format(time.RFC3339), im.Annotations["org.opencontainers.image.created"])
	require.NotEmpty(t, im.Annotations["org.opencontainers.image.base.digest"])

	img, err := remote.Image(mustRef(t, rr.Repository+"@"+im.Manifests[0].Digest.String()))
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)
	require.Equal(t, "8.7,11.0", m.Annotations["io.jetbake.sm-targets"])
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, "8.7,11.0", cfg.Config.Labels["io.jetbake.sm-targets"])
	require.Equal(t, rel.CUDA, cfg.Config.Labels["com.nvidia.cuda.version"])
	require.Contains(t, cfg.Config.Env, "NVIDIA_REQUIRE_CUDA=cuda>="+rel.CUDA)
	require.Contains(t, cfg.Config.Env, "NVIDIA_DISABLE_REQUIRE=true")
	require.Equal(t, []string{imagebuild.EntrypointPath}, cfg.Config.Entrypoint)
	require.Equal(t, "arm64", cfg.Architecture)
	// router.env, router.cmd and router.ports of the matrix.
	require.Contains(t, cfg.Config.Env, "PORT=80")
	require.Contains(t, cfg.Config.Env, "HUGGINGFACE_HUB_CACHE=/data")
	require.Equal(t, []string{"--json-output"}, cfg.Config.Cmd)
	require.Contains(t, cfg.Config.ExposedPorts, "80/tcp")
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s, name.Insecure)
	require.NoError(t, err)
	return ref
}

func pullArm64(t *testing.T, tag string) v1.Image {
	t.Helper()
	img, err := remote.Image(mustRef(t, tag), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
	require.NoError(t, err)
	return img
}

func imageFiles(t *testing.T, img v1.Image) []string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, runimage.Unpack(img, dir))
	var files []string
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files = append(files, strings.TrimPrefix(path, dir+"/"))
		}
		return err
	}))
	return files
}
