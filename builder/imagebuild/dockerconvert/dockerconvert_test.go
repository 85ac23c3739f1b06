package dockerconvert

import (
	"testing"
	"time"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/dockerfiles"
)

var arm64 = ocispecs.Platform{OS: "linux", Architecture: "arm64"}

// session is a gateway client with the options of a session that sent none.
type session struct{ gateway.Client }

func (session) BuildOpts() gateway.BuildOpts {
	return gateway.BuildOpts{Opts: map[string]string{"from": "session"}}
}

// The jetbake context is the same definition for the same commit time,
// another for another.
func TestJetbakeContext(t *testing.T) {
	epoch := time.Unix(1767225600, 0).UTC()
	a, err := JetbakeContext(t.Context(), epoch, arm64)
	require.NoError(t, err)
	require.Contains(t, a, dockerfiles.ContextName)
	b, err := JetbakeContext(t.Context(), epoch, arm64)
	require.NoError(t, err)
	require.Equal(t, a[dockerfiles.ContextName].Def, b[dockerfiles.ContextName].Def)
	c, err := JetbakeContext(t.Context(), epoch.Add(time.Second), arm64)
	require.NoError(t, err)
	require.NotEqual(t, a[dockerfiles.ContextName].Def, c[dockerfiles.ContextName].Def)
}

// dockerui sees the stage's options and inputs, not the session's.
func TestFrontendView(t *testing.T) {
	inputs := map[string]llb.State{dockerfiles.ContextName: JetbakeContextState(time.Unix(0, 0))}
	view := frontendView{Client: session{}, opts: map[string]string{"target": "router"}, inputs: inputs}
	require.Equal(t, map[string]string{"target": "router"}, view.BuildOpts().Opts)
	got, err := view.Inputs(t.Context())
	require.NoError(t, err)
	require.Equal(t, inputs, got)
}

// stageRef is a frontend's result of a stage built on scratch.
type stageRef struct{ gateway.Reference }

func (stageRef) ToState() (llb.State, error) { return llb.Scratch(), nil }

// A stage the frontend returned without an image config is refused by name.
func TestStageWithoutConfig(t *testing.T) {
	res := gateway.NewResult()
	res.SetRef(stageRef{})
	_, _, err := Stage(res, "runtime")
	require.EqualError(t, err, "the Dockerfile frontend returned no image config for stage runtime")
	res.AddMeta(exptypes.ExporterImageConfigKey, []byte(`{}`))
	_, config, err := Stage(res, "runtime")
	require.NoError(t, err)
	require.Equal(t, `{}`, string(config))
}
