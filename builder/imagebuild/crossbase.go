package imagebuild

import (
	"context"

	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/crossrecipe"
	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
)

// crossRecipeBase converts the release's cross build recipe when the
// router stage takes the cross path and the matrix names a recipe: the
// base, built FROM the job's crossBase (NVIDIA's devel image, mirrored and
// pinned), that the router stage gets as crossrecipe.ContextName; nil
// otherwise.
func (j *releaseJob) crossRecipeBase(ctx context.Context, c gateway.Client) (*crossrecipe.Base, error) {
	rc := j.release.CrossBuildRecipe
	if rc == nil || j.buildPath().Path != emulation.PathCross {
		return nil, nil
	}
	return crossrecipe.FromRecipe(ctx, c, j.resolved, rc, j.crossBase, emulation.BuildPlatform(c.BuildOpts()))
}

// crossBaseName says what the cross path compiles in, in the words of
// `jetbake plan` (crossrecipe.Describe).
func (j *releaseJob) crossBaseName() string {
	return crossrecipe.Describe(j.release.CrossBuildRecipe, j.crossBase)
}
