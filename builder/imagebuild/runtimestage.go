package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/dockerconvert"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
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
	res, err := dockerfile2llb.Dockerfile2LLB(ctx, dt, dockerconvert.Opt(c, bc, j.resolved, arm64Platform(), target, args, j.lintWarn(plan.Target{})))
	if err != nil {
		return llb.State{}, nil, fmt.Errorf("%s: %w", filepath.Join(j.dockerfileDir, j.dockerfile), err)
	}
	config, err := json.Marshal(res.Image)
	if err != nil {
		return llb.State{}, nil, err
	}
	return res.State, config, nil
}

// frontendStage solves stage target through the dockerfile.v0 frontend.
func (j *releaseJob) frontendStage(ctx context.Context, c gateway.Client, target string, args map[string]string) (llb.State, []byte, error) {
	inputs, err := dockerconvert.JetbakeContext(ctx, epochTime(j.opts.epoch), arm64Platform())
	if err != nil {
		return llb.State{}, nil, err
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Frontend: "dockerfile.v0", FrontendOpt: j.stageOpts(target, args), FrontendInputs: inputs})
	if err != nil {
		return llb.State{}, nil, err
	}
	return dockerconvert.Stage(res, target)
}
