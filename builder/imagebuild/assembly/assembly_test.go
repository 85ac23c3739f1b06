package assembly

import (
	"testing"
	"time"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	"github.com/moby/buildkit/solver/pb"
	"github.com/moby/buildkit/util/apicaps"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
)

var arm64 = ocispecs.Platform{OS: "linux", Architecture: "arm64"}

// layout is a release of two SM targets on a runtime stage.
func layout(caps apicaps.CapSet) Layout {
	base := llb.Image("registry.example/l4t-cuda:12.6")
	return Layout{Image: base.Run(llb.Shlex("apt-get install -y libssl3")).Root(), Base: &base,
		Tools: llb.Local("jetbake-entrypoint"), Binaries: []string{"/usr/local/bin/jetbake-entrypoint", "/usr/local/bin/jetbake-probe"},
		Routers: []Router{{Stage: llb.Image("router-87"), Output: "/out/router", Path: "/usr/local/bin/router-87"},
			{Stage: llb.Image("router-110"), Output: "/out/router", Path: "/opt/router/router-110"}},
		SMs: "8.7, 11.0", Description: []byte(`{}`), Epoch: time.Unix(1767225600, 0).UTC(), Caps: caps}
}

// ops are the names of the definition's vertices, and how many merge ops
// and diff ops it has.
func ops(t *testing.T, st llb.State) (names []string, merges, diffs int) {
	t.Helper()
	def, err := st.Marshal(t.Context(), llb.Platform(arm64))
	require.NoError(t, err)
	for _, m := range def.Metadata {
		if n := m.Description["llb.customname"]; n != "" {
			names = append(names, n)
		}
	}
	for _, dt := range def.Def {
		var op pb.Op
		require.NoError(t, op.UnmarshalVT(dt))
		if op.GetMerge() != nil {
			merges++
		}
		if op.GetDiff() != nil {
			diffs++
		}
	}
	return names, merges, diffs
}

// With MergeOp and DiffOp, the runtime stage's changes and the two layers
// are merged onto the runtime base, each stamped with the commit's time,
// each layer one file operation; without them, the layers are copied into
// the image.
func TestLayers(t *testing.T) {
	all := pb.Caps.CapSet(pb.Caps.All())
	names, merges, diffs := ops(t, Layers(layout(all)))
	require.Equal(t, 1, merges)
	require.Equal(t, 1, diffs)
	require.ElementsMatch(t, []string{"add the entrypoint, the CUDA probe and the evidence probe",
		"add the routers (8.7, 11.0) and /etc/jetbake/image.json",
		"the runtime stage's changes", "stamp the runtime stage's changes with the commit's time",
		"merge onto the runtime base"}, names, "one step per layer, no separate staging")

	var older apicaps.CapList // a daemon without MergeOp and DiffOp
	for _, c := range pb.Caps.All() {
		if id := apicaps.CapID(c.ID); id != pb.CapMergeOp && id != pb.CapDiffOp {
			older.Init(apicaps.Cap{ID: id, Enabled: true})
		}
	}
	names, merges, diffs = ops(t, Layers(layout(older.CapSet(older.All()))))
	require.Zero(t, merges)
	require.Zero(t, diffs)
	require.Contains(t, names, "copy the routers and image.json into the image")

	app := layout(all)
	app.App, app.Routers = true, nil
	names, _, _ = ops(t, Layers(app))
	require.Contains(t, names, "add /etc/jetbake/image.json")
}

// A layer's files are staged and stamped inside one file operation: the
// stamp copies the staged tree, an action of the same operation, with the
// commit's time.
func TestStageIsOneOperation(t *testing.T) {
	epoch := time.Unix(1767225600, 0).UTC()
	st := Stage(llb.Mkdir("/etc/jetbake", 0o755, llb.WithParents(true)).Mkfile("/etc/jetbake/image.json", 0o644, []byte(`{}`)), epoch)
	def, err := st.Marshal(t.Context(), llb.Platform(arm64))
	require.NoError(t, err)
	var files []*pb.FileOp
	inputs := 0
	for _, dt := range def.Def {
		var op pb.Op
		require.NoError(t, op.UnmarshalVT(dt))
		if f := op.GetFile(); f != nil {
			files, inputs = append(files, f), len(op.Inputs)
		}
	}
	require.Len(t, files, 1)
	actions := files[0].Actions
	require.Len(t, actions, 3, "mkdir, mkfile and the stamp")
	stamp := actions[2].GetCopy()
	require.NotNil(t, stamp)
	require.True(t, stamp.DirCopyContents)
	require.Equal(t, epoch.UnixNano(), stamp.Timestamp)
	require.Equal(t, int64(-1), int64(actions[2].Input), "the stamp writes on scratch")
	require.Equal(t, int64(inputs+1), int64(actions[2].SecondaryInput), "it copies from the staging actions' output (the mkfile's)")
}

// The result is one platform's, with the image config and every
// annotation on both the index and the manifest.
func TestResult(t *testing.T) {
	res, err := Result(nil, arm64, []byte(`{"architecture":"arm64"}`), map[string]string{"io.jetbake.audit": "8.7=runs"})
	require.NoError(t, err)
	require.Contains(t, res.Refs, "linux/arm64")
	require.Equal(t, `{"architecture":"arm64"}`, string(res.Metadata[exptypes.ExporterImageConfigKey+"/linux/arm64"]))
	require.Equal(t, "8.7=runs", string(res.Metadata[exptypes.AnnotationIndexKey("io.jetbake.audit")]))
	require.Equal(t, "8.7=runs", string(res.Metadata[exptypes.AnnotationManifestKey(nil, "io.jetbake.audit")]))
	require.Contains(t, string(res.Metadata[exptypes.ExporterPlatformsKey]), `"ID":"linux/arm64"`)
}
