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

// With MergeOp and DiffOp, the runtime stage's changes and the two staged
// layers are merged onto the runtime base, each stamped with the commit's
// time; without them, the layers are copied into the image.
func TestLayers(t *testing.T) {
	all := pb.Caps.CapSet(pb.Caps.All())
	names, merges, diffs := ops(t, Layers(layout(all)))
	require.Equal(t, 1, merges)
	require.Equal(t, 1, diffs)
	require.Contains(t, names, "stage the routers (8.7, 11.0) and /etc/jetbake/image.json")
	require.Contains(t, names, "stage the entrypoint, the CUDA probe and the evidence probe")
	require.Contains(t, names, "merge onto the runtime base")

	var older apicaps.CapList // a daemon without MergeOp and DiffOp
	for _, c := range pb.Caps.All() {
		if id := apicaps.CapID(c.ID); id != pb.CapMergeOp && id != pb.CapDiffOp {
			older.Init(apicaps.Cap{ID: id, Enabled: true})
		}
	}
	names, merges, diffs = ops(t, Layers(layout(older.CapSet(older.All()))))
	require.Zero(t, merges)
	require.Zero(t, diffs)
	require.Contains(t, names, "add the routers and image.json")

	app := layout(all)
	app.App, app.Routers = true, nil
	names, _, _ = ops(t, Layers(app))
	require.Contains(t, names, "stage /etc/jetbake/image.json")
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
