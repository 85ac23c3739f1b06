// Package dockerconvert runs BuildKit's Dockerfile converter (dockerfile2llb,
// the code the dockerfile.v0 frontend runs) inside jetbake as the frontend
// would run it: dockerui reads the session through a view that carries the
// stage's frontend options and inputs, the converter targets the image's
// platform on the node's build platform with its base lookups served by the
// build's resolve cache. It also makes the jetbake named context (package
// dockerfiles' files), which the converter and the frontend both take as an
// input, and reads a frontend's stage back as a state and its image config.
package dockerconvert

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerui"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/solver/pb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
	"github.com/jetbake/jetbake/builder/imagebuild/resolvecache"
	"github.com/jetbake/jetbake/dockerfiles"
)

// JetbakeContext is the named build context dockerfiles.ContextName: the
// files of package dockerfiles (the compute-cap script), with the commit's
// time, handed to the Dockerfile frontend as a frontend input so that the
// router stage can `COPY --from=jetbake`. See package dockerfiles for why.
func JetbakeContext(ctx context.Context, epoch time.Time, platform ocispecs.Platform) (map[string]*pb.Definition, error) {
	def, err := JetbakeContextState(epoch).Marshal(ctx, llb.Platform(platform))
	if err != nil {
		return nil, fmt.Errorf("marshal the %s build context: %w", dockerfiles.ContextName, err)
	}
	return map[string]*pb.Definition{dockerfiles.ContextName: def.ToPB()}, nil
}

// JetbakeContextState is the content of the jetbake named context.
func JetbakeContextState(epoch time.Time) llb.State {
	created := llb.WithCreatedTime(epoch)
	files := dockerfiles.Files()
	st := llb.Scratch()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		st = st.File(llb.Mkfile(name, 0o755, files[name], created), llb.WithCustomNamef("jetbake context: %s", name))
	}
	return st
}

// Client is dockerui's client of the session c as a frontend call with
// opts and inputs would see it: dockerui then reads the main context, its
// .dockerignore and the named contexts exactly as the frontend does.
func Client(c gateway.Client, opts map[string]string, inputs map[string]llb.State) (*dockerui.Client, error) {
	return dockerui.NewClient(frontendView{Client: c, opts: opts, inputs: inputs})
}

// frontendView is the session's gateway client with the options and inputs
// a frontend call for the stage would carry.
type frontendView struct {
	gateway.Client
	opts   map[string]string
	inputs map[string]llb.State
}

// BuildOpts implements gateway.Client.
func (v frontendView) BuildOpts() gateway.BuildOpts {
	o := v.Client.BuildOpts()
	o.Opts = v.opts
	return o
}

// Inputs implements gateway.Client.
func (v frontendView) Inputs(context.Context) (map[string]llb.State, error) {
	return v.inputs, nil
}

// Opt are the converter's options for stage target with args on platform,
// built on the node's build platform (emulation.BuildPlatform), its image
// lookups served by cache, its checks' warnings given to warn.
func Opt(c gateway.Client, bc *dockerui.Client, cache *resolvecache.Cache, platform ocispecs.Platform, target string, args map[string]string, warn linter.LintWarnFunc) dockerfile2llb.ConvertOpt {
	bopts := c.BuildOpts()
	buildPlatform := emulation.BuildPlatform(bopts)
	caps := bopts.LLBCaps
	return dockerfile2llb.ConvertOpt{
		Config: dockerui.Config{
			BuildArgs:       args,
			Target:          target,
			TargetPlatforms: []ocispecs.Platform{platform},
			BuildPlatforms:  []ocispecs.Platform{buildPlatform},
		},
		Client:         bc,
		TargetPlatform: &platform,
		MetaResolver:   &resolvecache.MetaResolver{C: c, Cache: cache},
		LLBCaps:        &caps,
		Warn:           warn,
	}
}

// CacheImports are the session's cache imports (--cache-from), read from
// its options as the Dockerfile frontend reads them.
func CacheImports(c gateway.Client) ([]gateway.CacheOptionsEntry, error) {
	bc, err := dockerui.NewClient(c)
	if err != nil {
		return nil, fmt.Errorf("session options: %w", err)
	}
	return bc.CacheImports, nil
}

// State is the state of res, a frontend's result of one stage.
func State(res *gateway.Result) (llb.State, error) {
	ref, err := res.SingleRef()
	if err != nil {
		return llb.State{}, err
	}
	return ref.ToState()
}

// Stage is State and the stage's image config, which the frontend must
// have returned for target.
func Stage(res *gateway.Result, target string) (llb.State, []byte, error) {
	st, err := State(res)
	if err != nil {
		return llb.State{}, nil, err
	}
	config := res.Metadata[exptypes.ExporterImageConfigKey]
	if len(config) == 0 {
		return llb.State{}, nil, fmt.Errorf("the Dockerfile frontend returned no image config for stage %s", target)
	}
	return st, config, nil
}
