package gitcontext

import (
	"context"
	"errors"

	"github.com/moby/buildkit/frontend/dockerui"
	"github.com/moby/buildkit/solver/pb"
)

// SourceOp is the source operation the Dockerfile frontend makes of a
// git context (dockerui.DetectGitContext), for BuildKit to resolve.
func SourceOp(ctx context.Context, gitContext string) (*pb.SourceOp, error) {
	st, _, err := dockerui.DetectGitContext(gitContext, nil)
	if err != nil {
		return nil, err
	}
	def, err := st.Marshal(ctx)
	if err != nil {
		return nil, err
	}
	for _, dt := range def.Def {
		var op pb.Op
		if err := op.Unmarshal(dt); err != nil {
			return nil, err
		}
		if src := op.GetSource(); src != nil {
			return src, nil
		}
	}
	return nil, errors.New("the git context has no source operation")
}
