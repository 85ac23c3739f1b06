package verdicts

import (
	"testing"

	"github.com/moby/buildkit/client/llb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
)

// The runtime image's part of the key follows its definition: the same
// steps on the same base give the same digest, another step another.
func TestRuntime(t *testing.T) {
	arm64 := ocispecs.Platform{OS: "linux", Architecture: "arm64"}
	base := llb.Image("registry.example/l4t-cuda@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	stage := base.Run(llb.Shlex("apt-get install -y libssl3")).Root()
	d, err := Runtime(t.Context(), stage, arm64)
	require.NoError(t, err)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, d)
	again, err := Runtime(t.Context(), base.Run(llb.Shlex("apt-get install -y libssl3")).Root(), arm64)
	require.NoError(t, err)
	require.Equal(t, d, again)
	other, err := Runtime(t.Context(), base.Run(llb.Shlex("apt-get install -y libssl-dev")).Root(), arm64)
	require.NoError(t, err)
	require.NotEqual(t, d, other)
	onBase, err := Runtime(t.Context(), base, arm64)
	require.NoError(t, err)
	require.NotEqual(t, d, onBase)
}
