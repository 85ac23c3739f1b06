package verdicts

import (
	"context"
	"errors"

	"github.com/moby/buildkit/client/llb"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// Runtime is Inputs.RuntimeStage of the runtime stage st, its definition
// marshalled for platform: the digest of the definition's last op, which
// names every op under it by digest: the base pinned by digest, each step,
// each input. A local source's op names its session, so a stage that
// copies local files never matches. The stage's files (RuntimeFiles) cover
// what the definition cannot: other bytes from the same steps after a
// prune; the definition covers what its files cannot: a base file the
// stage deletes, which its changes (a DiffOp) do not show.
func Runtime(ctx context.Context, st llb.State, platform ocispecs.Platform) (string, error) {
	def, err := st.Marshal(ctx, llb.Platform(platform))
	if err != nil {
		return "", err
	}
	if len(def.Def) == 0 {
		return "", errors.New("the runtime image's definition is empty")
	}
	return digest.FromBytes(def.Def[len(def.Def)-1]).String(), nil
}
