package crossrecipe

import (
	"testing"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/solver/pb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/plan"
)

// What the cross path compiles in, as `jetbake plan` says it.
func TestDescribe(t *testing.T) {
	const image = "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"
	require.Equal(t, image, Describe(nil, image))
	require.Equal(t, "the base jetbake's Dockerfile-cross-base builds FROM "+image, Describe(&plan.CrossRecipe{Dockerfile: "jetbake"}, image))
	require.Equal(t, "the base ci/Dockerfile.cross builds FROM "+image, Describe(&plan.CrossRecipe{Dockerfile: "ci/Dockerfile.cross"}, image))
}

// Without a recipe's base nothing is added; with one, the router stage
// gets it as the named context, its image config included, and the
// converter and the frontend get its state.
func TestAddTo(t *testing.T) {
	amd64 := ocispecs.Platform{OS: "linux", Architecture: "amd64"}
	var none *Base
	opts, states, defs := map[string]string{}, map[string]llb.State{}, map[string]*pb.Definition{}
	require.NoError(t, none.AddTo(opts, states))
	require.NoError(t, none.AddInput(t.Context(), amd64, defs))
	require.Empty(t, opts)
	require.Empty(t, states)
	require.Empty(t, defs)
	base := &Base{State: llb.Image("nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"), Config: []byte(`{"architecture":"amd64"}`)}
	require.NoError(t, base.AddTo(opts, states))
	require.NoError(t, base.AddInput(t.Context(), amd64, defs))
	require.Equal(t, "input:"+ContextName, opts["context:"+ContextName])
	require.Contains(t, opts["input-metadata:"+ContextName], "containerimage.config")
	require.Contains(t, states, ContextName)
	require.NotEmpty(t, defs[ContextName].Def)
}
