package imagebuild

import (
	"context"
	"maps"
	"path/filepath"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/solver/pb"

	"github.com/jetbake/jetbake/builder/imagebuild/crossrecipe"
	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/dockerfiles"
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
	name, data := "jetbake's "+dockerfiles.CrossBaseRecipe, dockerfiles.DockerfileCrossBase()
	if rc.Dockerfile != matrix.BuiltinRecipe {
		var err error
		name = filepath.Clean(rc.Dockerfile)
		if data, err = inputfile.Read(name, "the cross build recipe"); err != nil {
			return nil, err
		}
	}
	args := maps.Clone(rc.Args)
	args[computecap.RecipeArgDevelImage] = j.crossBase
	build := emulation.BuildPlatform(c.BuildOpts())
	return crossrecipe.Convert(ctx, c, j.resolved, name, data, args, build)
}

// crossBaseName says what the cross path compiles in, in the words of
// `jetbake plan`: the image, or the base the recipe builds FROM it.
func (j *releaseJob) crossBaseName() string {
	rc := j.release.CrossBuildRecipe
	if rc == nil {
		return j.crossBase
	}
	name := rc.Dockerfile
	if name == matrix.BuiltinRecipe {
		name = "jetbake's " + dockerfiles.CrossBaseRecipe
	}
	return "the base " + name + " builds FROM " + j.crossBase
}

// withCrossRecipe adds the recipe's base, when there is one, to a router
// stage's frontend options and, as a state, to the converter's inputs
// (states, when not nil).
func withCrossRecipe(base *crossrecipe.Base, opts map[string]string, states map[string]llb.State) error {
	if base == nil {
		return nil
	}
	named, err := base.FrontendOpts()
	if err != nil {
		return err
	}
	maps.Copy(opts, named)
	if states != nil {
		states[crossrecipe.ContextName] = base.State
	}
	return nil
}

// addCrossRecipeInput adds the recipe's base, when there is one, to the
// frontend's inputs as a definition.
func addCrossRecipeInput(ctx context.Context, c gateway.Client, base *crossrecipe.Base, defs map[string]*pb.Definition) error {
	if base == nil {
		return nil
	}
	def, err := base.Definition(ctx, emulation.BuildPlatform(c.BuildOpts()))
	if err != nil {
		return err
	}
	defs[crossrecipe.ContextName] = def
	return nil
}
