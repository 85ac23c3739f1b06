package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerui"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/resolvecache"
	"github.com/jetbake/jetbake/builder/plan"
)

// runtimeImage is what each image is assembled on: the runtime base, or
// the router Dockerfile's runtime stage built on it (router.runtime_target).
type runtimeImage struct {
	// state is its file system.
	state llb.State
	// base is the runtime base the stage starts from, nil without a stage.
	base *llb.State
	// config is its image config (JSON), which the image's config extends.
	config []byte
	// name says what it is in messages: "the runtime base REF" or "stage
	// S of the Dockerfile on REF".
	name string
}

// runtimeBaseImage is the release's runtime image: its runtime stage when
// the router names one, else the runtime base at ref (pinned) with config.
func (j *releaseJob) runtimeBaseImage(ctx context.Context, c gateway.Client, buildBase, ref string, config []byte) (runtimeImage, error) {
	target := j.plan.Router.RuntimeTarget
	if target == "" {
		return runtimeImage{state: j.runtimeBaseState(ref), config: config, name: "the runtime base " + j.release.RuntimeBase}, nil
	}
	defer j.timings.Record(progress.PhaseFrontend, time.Now())
	st, cfg, err := j.solveStage(ctx, c, buildBase, target, j.runtimeArgs(buildBase, ref))
	if err != nil {
		return runtimeImage{}, fmt.Errorf("runtime stage %s on %s: %w", target, j.release.RuntimeBase, err)
	}
	base := j.runtimeBaseState(ref)
	return runtimeImage{state: st, base: &base, config: cfg,
		name: fmt.Sprintf("the runtime image (stage %s of %s on %s)", target, j.dockerfile, j.release.RuntimeBase)}, nil
}

// solveStage converts stage target of the router's Dockerfile with args, in
// jetbake (BuildKit's converter, as for the router stage) or, for a
// Dockerfile with a "# syntax=" line, through the Dockerfile frontend, and
// returns its state and image config.
func (j *releaseJob) solveStage(ctx context.Context, c gateway.Client, buildBase, target string, args map[string]string) (llb.State, []byte, error) {
	dt, err := os.ReadFile(filepath.Join(j.dockerfileDir, j.dockerfile))
	if err != nil {
		return llb.State{}, nil, fmt.Errorf("read the router's Dockerfile: %w", err)
	}
	if _, _, _, syntax := parser.DetectSyntax(dt); syntax {
		return j.frontendStage(ctx, c, target, args)
	}
	bc, err := j.converterClient(ctx, c, buildBase)
	if err != nil {
		return llb.State{}, nil, err
	}
	res, err := dockerfile2llb.Dockerfile2LLB(ctx, dt, j.convertOpt(c, bc, target, args, j.lintWarn(plan.Target{})))
	if err != nil {
		return llb.State{}, nil, fmt.Errorf("%s: %w", filepath.Join(j.dockerfileDir, j.dockerfile), err)
	}
	config, err := json.Marshal(res.Image)
	if err != nil {
		return llb.State{}, nil, err
	}
	return res.State, config, nil
}

// convertOpt are the converter's options for stage target with args.
func (j *releaseJob) convertOpt(c gateway.Client, bc *dockerui.Client, target string, args map[string]string, warn func(string, string, string, string, []parser.Range)) dockerfile2llb.ConvertOpt {
	bopts := c.BuildOpts()
	buildPlatform := emulation.BuildPlatform(bopts)
	platform := arm64Platform()
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
		MetaResolver:   &resolvecache.MetaResolver{C: c, Cache: j.resolved},
		LLBCaps:        &caps,
		Warn:           warn,
	}
}

// frontendStage solves stage target through the dockerfile.v0 frontend.
func (j *releaseJob) frontendStage(ctx context.Context, c gateway.Client, target string, args map[string]string) (llb.State, []byte, error) {
	inputs, err := jetbakeContext(ctx, j.opts.epoch)
	if err != nil {
		return llb.State{}, nil, err
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Frontend: "dockerfile.v0", FrontendOpt: j.stageOpts(target, args), FrontendInputs: inputs})
	if err != nil {
		return llb.State{}, nil, err
	}
	ref, err := res.SingleRef()
	if err != nil {
		return llb.State{}, nil, err
	}
	st, err := ref.ToState()
	if err != nil {
		return llb.State{}, nil, err
	}
	config := res.Metadata[exptypes.ExporterImageConfigKey]
	if len(config) == 0 {
		return llb.State{}, nil, fmt.Errorf("the Dockerfile frontend returned no image config for stage %s", target)
	}
	return st, config, nil
}
