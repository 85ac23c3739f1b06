// Package crossrecipe turns a release's cross build recipe
// (dockerfiles/Dockerfile-cross-base, or the matrix's own) into the LLB of
// the cross build base on the build platform, with BuildKit's own
// Dockerfile converter, and hands it to the router stage as a named build
// context: Dockerfile-jetson's toolchain-cross stage starts FROM
// ${CROSS_BUILD_BASE}, which is then the context's name. The base is built
// as part of the release's build, in the same solve, and BuildKit's cache
// shares it between the releases and builds that give the same arguments.
package crossrecipe

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/solver/pb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/imagebuild/dockerconvert"
	"github.com/jetbake/jetbake/builder/imagebuild/resolvecache"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/dockerfiles"
)

// ContextName is the named build context the base is handed to the router
// stage as, and so the value of its CROSS_BUILD_BASE build argument.
const ContextName = "jetbake-cross-base"

// Base is a converted cross build base: its LLB and its image config (the
// devel image's environment, which the toolchain-cross stage builds on).
type Base struct {
	State  llb.State
	Config []byte
}

// Convert converts the recipe dockerfile with args for the build platform
// (the recipe's base runs where the router is cross-compiled), as the
// router stage is converted (dockerconvert), its image lookups served by
// the build's resolve cache. file names the recipe in errors.
func Convert(ctx context.Context, c gateway.Client, cache *resolvecache.Cache, file string, dockerfile []byte, args map[string]string, build ocispecs.Platform) (*Base, error) {
	opts := map[string]string{"platform": platforms.Format(build)}
	for k, v := range args {
		opts["build-arg:"+k] = v
	}
	bc, err := dockerconvert.Client(c, opts, nil) // the recipe reads no build context
	if err != nil {
		return nil, fmt.Errorf("cross build recipe %s: %w", file, err)
	}
	res, err := dockerfile2llb.Dockerfile2LLB(ctx, dockerfile, dockerconvert.Opt(c, bc, cache, build, "", args, nil))
	if err != nil {
		return nil, fmt.Errorf("cross build recipe %s: %w", file, err)
	}
	config, err := json.Marshal(res.Image)
	if err != nil {
		return nil, fmt.Errorf("cross build recipe %s: image config: %w", file, err)
	}
	return &Base{State: res.State, Config: config}, nil
}

// FrontendOpts are the frontend options that name the base as the context
// ContextName, its image config included, for a conversion or a frontend
// call that gets the base as an input of that name.
func (b *Base) FrontendOpts() (map[string]string, error) {
	md, err := json.Marshal(map[string][]byte{exptypes.ExporterImageConfigKey: b.Config})
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"context:" + ContextName:        "input:" + ContextName,
		"input-metadata:" + ContextName: string(md),
	}, nil
}

// Definition is the base's LLB as a frontend input.
func (b *Base) Definition(ctx context.Context, build ocispecs.Platform) (*pb.Definition, error) {
	def, err := b.State.Marshal(ctx, llb.Platform(build))
	if err != nil {
		return nil, fmt.Errorf("marshal the cross build base: %w", err)
	}
	return def.ToPB(), nil
}

// FromRecipe reads and converts the recipe rc names (jetbake's own
// Dockerfile-cross-base, or the matrix's file) with its arguments and the
// release's devel image, for the build platform build.
func FromRecipe(ctx context.Context, c gateway.Client, cache *resolvecache.Cache, rc *plan.CrossRecipe, develImage string, build ocispecs.Platform) (*Base, error) {
	name, data := "jetbake's "+dockerfiles.CrossBaseRecipe, dockerfiles.DockerfileCrossBase()
	if rc.Dockerfile != matrix.BuiltinRecipe {
		var err error
		name = filepath.Clean(rc.Dockerfile)
		if data, err = inputfile.Read(name, "the cross build recipe"); err != nil {
			return nil, err
		}
	}
	args := maps.Clone(rc.Args)
	if args == nil {
		args = map[string]string{}
	}
	args[computecap.RecipeArgDevelImage] = develImage
	return Convert(ctx, c, cache, name, data, args, build)
}

// Describe says what the cross path compiles in, in the words of `jetbake
// plan`: the image, or, with a recipe rc, the base it builds FROM the image.
func Describe(rc *plan.CrossRecipe, image string) string {
	if rc == nil {
		return image
	}
	name := rc.Dockerfile
	if name == matrix.BuiltinRecipe {
		name = "jetbake's " + dockerfiles.CrossBaseRecipe
	}
	return "the base " + name + " builds FROM " + image
}

// AddTo adds the base, when there is one (b not nil), to a router stage's
// frontend options and, as a state, to the converter's inputs (states,
// when not nil).
func (b *Base) AddTo(opts map[string]string, states map[string]llb.State) error {
	if b == nil {
		return nil
	}
	named, err := b.FrontendOpts()
	if err != nil {
		return err
	}
	maps.Copy(opts, named)
	if states != nil {
		states[ContextName] = b.State
	}
	return nil
}

// AddInput adds the base, when there is one, to the frontend's inputs as a
// definition for the build platform.
func (b *Base) AddInput(ctx context.Context, build ocispecs.Platform, defs map[string]*pb.Definition) error {
	if b == nil {
		return nil
	}
	def, err := b.Definition(ctx, build)
	if err != nil {
		return err
	}
	defs[ContextName] = def
	return nil
}

// State is the cross build base as a state: the recipe's base b, else the
// image ref for the build platform, pinned through the build's resolve
// cache as the router stage's FROM is.
func State(b *Base, c gateway.Client, cache *resolvecache.Cache, ref string, build ocispecs.Platform, mode llb.ResolveMode) llb.State {
	if b != nil {
		return b.State
	}
	return llb.Image(ref, llb.Platform(build), mode, llb.ResolveDigest(true), llb.WithMetaResolver(&resolvecache.MetaResolver{C: c, Cache: cache}))
}
