package imageconfig

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/internal/buildtest"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// entrypoint is the image's entrypoint in the tests.
const entrypoint = "/usr/local/bin/jetbake-entrypoint"

// baseConfig is a runtime base's config the way NVIDIA's look: its own
// entrypoint and command, CUDA variables, labels and history.
const baseConfig = `{
  "architecture": "arm64",
  "os": "linux",
  "created": "2025-03-01T10:00:00Z",
  "config": {
    "Env": [
      "PATH=/usr/local/cuda/bin:/usr/bin:/bin",
      "NVIDIA_REQUIRE_CUDA=cuda>=12.2 brand=tegra",
      "CUDA_VERSION=12.6.11",
      "NVIDIA_VISIBLE_DEVICES=void"
    ],
    "Entrypoint": ["/opt/nvidia/nvidia_entrypoint.sh"],
    "Cmd": ["/bin/bash"],
    "WorkingDir": "/workspace",
    "Labels": {"maintainer": "NVIDIA CORPORATION", "org.opencontainers.image.version": "base"}
  },
  "rootfs": {"type": "layers", "diff_ids": ["sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"]},
  "history": [{"created_by": "base layer"}]
}`

func envValues(env []string, key string) []string {
	var out []string
	for _, e := range env {
		if k, v, _ := strings.Cut(e, "="); k == key {
			out = append(out, v)
		}
	}
	return out
}

func TestImageConfig(t *testing.T) {
	p := buildtest.Plan()
	rel := p.Releases[1]
	labels := map[string]string{"org.opencontainers.image.version": "1.8.0", "io.jetbake.release": rel.Name}
	epoch := time.Unix(buildtest.Epoch, 0)

	router := p.Router
	router.Env = map[string]string{"PORT": "80", "HUGGINGFACE_HUB_CACHE": "/data", "CUDA_VERSION": "x"}
	router.Cmd = []string{"--json-output"}
	router.Ports = []string{"80/tcp", "9000"}
	data, err := Router([]byte(baseConfig), entrypoint, router, rel, labels, epoch)
	require.NoError(t, err)
	var img ocispecs.Image
	require.NoError(t, json.Unmarshal(data, &img))

	require.Equal(t, "arm64", img.Architecture)
	require.Equal(t, "linux", img.OS)
	require.Empty(t, img.Variant)
	require.NotNil(t, img.Created)
	require.True(t, img.Created.Equal(epoch), "created is the epoch, not the base's date: %s", img.Created)
	require.Equal(t, []string{entrypoint}, img.Config.Entrypoint)
	require.Equal(t, []string{"--json-output"}, img.Config.Cmd, "router.cmd, not the base's command")
	require.Equal(t, map[string]struct{}{"80/tcp": {}, "9000/tcp": {}}, img.Config.ExposedPorts)
	require.Equal(t, []string{"80"}, envValues(img.Config.Env, "PORT"))
	require.Equal(t, []string{"/data"}, envValues(img.Config.Env, "HUGGINGFACE_HUB_CACHE"))
	require.Equal(t, "/workspace", img.Config.WorkingDir, "the rest of the base config is kept")

	require.Equal(t, []string{"cuda>=13.2"}, envValues(img.Config.Env, "NVIDIA_REQUIRE_CUDA"))
	require.Equal(t, []string{"true"}, envValues(img.Config.Env, "NVIDIA_DISABLE_REQUIRE"),
		"the entrypoint's host rule decides, not the runtime's requirement check")
	require.Equal(t, []string{"all"}, envValues(img.Config.Env, "NVIDIA_VISIBLE_DEVICES"))
	require.Equal(t, []string{"compute,utility"}, envValues(img.Config.Env, "NVIDIA_DRIVER_CAPABILITIES"))
	require.Equal(t, []string{"/usr/local/cuda/bin:/usr/bin:/bin"}, envValues(img.Config.Env, "PATH"))
	require.Equal(t, []string{"x"}, envValues(img.Config.Env, "CUDA_VERSION"), "router.env replaces the base's")
	require.Len(t, img.Config.Env, 8)

	require.Equal(t, map[string]string{
		"maintainer":                       "NVIDIA CORPORATION",
		"org.opencontainers.image.version": "1.8.0",
		"io.jetbake.release":               "jetpack7.2",
	}, img.Config.Labels)

	require.Len(t, img.History, 3, "the base's, jetbake's own layer, the release's layer")
	require.Equal(t, "jetbake: entrypoint, CUDA probe, evidence probe", img.History[1].CreatedBy)
	last := img.History[2]
	require.True(t, last.Created.Equal(epoch))
	require.Contains(t, last.CreatedBy, "sm_87, sm_110")
	require.Contains(t, last.CreatedBy, imagespec.Path)
	require.Equal(t, "jetbake", last.Comment)
	require.Equal(t, "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		img.RootFS.DiffIDs[0].String(), "the base's layers stay")
}

func TestImageConfigMinimalBase(t *testing.T) {
	rel := buildtest.Plan().Releases[0]
	data, err := Router([]byte(`{"architecture":"amd64","os":"linux","variant":"v8"}`), entrypoint, plan.Router{}, rel, nil, time.Unix(0, 0))
	require.NoError(t, err)
	var img ocispecs.Image
	require.NoError(t, json.Unmarshal(data, &img))
	require.Equal(t, "arm64", img.Architecture)
	require.Empty(t, img.Variant)
	require.Equal(t, []string{
		"NVIDIA_REQUIRE_CUDA=cuda>=12.6",
		"NVIDIA_DISABLE_REQUIRE=true",
		"NVIDIA_VISIBLE_DEVICES=all",
		"NVIDIA_DRIVER_CAPABILITIES=compute,utility",
	}, img.Config.Env)
	require.Empty(t, img.Config.Labels)
}

func TestImageConfigInvalidBase(t *testing.T) {
	rel := buildtest.Plan().Releases[0]
	_, err := Router([]byte("not json"), entrypoint, plan.Router{}, rel, nil, time.Unix(0, 0))
	require.Error(t, err)
	require.Contains(t, err.Error(), rel.RuntimeBase)
	require.Contains(t, err.Error(), "not valid JSON")
}

func TestSetEnv(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		kv   []string
		want []string
	}{
		{name: "empty", env: nil, kv: []string{"A", "1"}, want: []string{"A=1"}},
		{name: "replace", env: []string{"A=0", "B=2"}, kv: []string{"A", "1"}, want: []string{"B=2", "A=1"}},
		{name: "duplicates removed", env: []string{"A=0", "A=00"}, kv: []string{"A", "1"}, want: []string{"A=1"}},
		{name: "prefix of another key kept", env: []string{"AB=0"}, kv: []string{"A", "1"}, want: []string{"AB=0", "A=1"}},
		{name: "odd pair ignored", env: []string{"B=2"}, kv: []string{"A", "1", "C"}, want: []string{"B=2", "A=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]string(nil), tt.env...)
			require.Equal(t, tt.want, setEnv(tt.env, tt.kv...))
			require.Equal(t, before, tt.env, "the input is not changed")
		})
	}
}

func TestBuildMetadata(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	rel := buildtest.Plan().Releases[0]
	epoch := time.Unix(buildtest.Epoch, 0)

	tests := []struct {
		name       string
		revision   string
		baseDigest string
		want       map[string]string
	}{
		{name: "everything", revision: "abc123", baseDigest: digest, want: map[string]string{
			"org.opencontainers.image.version": "1.8.0",
			"io.jetbake.release":               "jetpack6.2",
			ocispecs.AnnotationRevision:        "abc123",
			ocispecs.AnnotationCreated:         "2026-01-01T00:00:00Z",
			ocispecs.AnnotationBaseImageName:   rel.RuntimeBase,
			ocispecs.AnnotationBaseImageDigest: digest,
		}},
		{name: "no revision or digest", want: map[string]string{
			"org.opencontainers.image.version": "1.8.0",
			"io.jetbake.release":               "jetpack6.2",
			ocispecs.AnnotationCreated:         "2026-01-01T00:00:00Z",
			ocispecs.AnnotationBaseImageName:   rel.RuntimeBase,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Metadata(rel, tt.revision, epoch, rel.RuntimeBase, tt.baseDigest)
			require.Equal(t, tt.want, got)
			require.Len(t, rel.Annotations, 2, "the plan's annotations are not changed")
		})
	}

	got := Metadata(buildtest.Plan().Releases[1], "", time.Unix(0, 0), "base", "")
	require.Equal(t, map[string]string{
		ocispecs.AnnotationCreated:       "1970-01-01T00:00:00Z",
		ocispecs.AnnotationBaseImageName: "base",
	}, got, "a release without annotations")
}

func TestDescription(t *testing.T) {
	p := buildtest.Plan()
	rel := p.Releases[1]
	data, err := Description(p, rel, "abc123")
	require.NoError(t, err)

	img, err := imagespec.Parse(data)
	require.NoError(t, err)
	require.Equal(t, &imagespec.Description{
		SchemaVersion: imagespec.SchemaVersion,
		Router:        "text-embeddings-router",
		Version:       "1.8.0",
		Release:       "jetpack7.2",
		JetPack:       "7.2",
		L4T:           "39.2.0",
		CUDA:          "13.2",
		Revision:      "abc123",
		Tags:          rel.Tags,
		Smoke:         []string{"--version"},
		Targets: []imagespec.Target{
			{SM: "8.7", Path: "/usr/local/bin/router-87"},
			{SM: "11.0", Path: "/usr/local/bin/router-110"},
		},
		Family: []imagespec.Sibling{
			{Release: "jetpack6.2", JetPack: "6.2", L4T: "36.4.3", Targets: []string{"8.7"}, Tags: p.Releases[0].Tags, Tier: "candidate"},
			{Release: "jetpack7.2", JetPack: "7.2", L4T: "39.2.0", Targets: []string{"8.7", "11.0"}, Tags: rel.Tags, Tier: "evaluate-later"},
		},
	}, img)
}

func TestImageDescriptionInvalid(t *testing.T) {
	p := buildtest.Plan()
	rel := p.Releases[0]
	rel.Targets = nil
	_, err := Description(p, rel, "")
	require.Error(t, err)
	require.Contains(t, err.Error(), "release jetpack6.2")
	require.Contains(t, err.Error(), "targets: is empty")

	p.Router.Name = ""
	_, err = Description(p, p.Releases[0], "")
	require.Error(t, err)
	require.Contains(t, err.Error(), "router: is empty")
}

// The entrypoint runs only binaries in imagespec.BinaryDir: the plan must
// put them there, each at a clean path.
func TestBinaryDirsAgree(t *testing.T) {
	require.Equal(t, imagespec.BinaryDir, plan.BinaryDir)
	for _, r := range buildtest.Plan().Releases {
		for _, tg := range r.Targets {
			require.True(t, imagespec.InBinaryDir(tg.Path), tg.Path)
		}
	}
}
