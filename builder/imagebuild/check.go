package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/moby/buildkit/client"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/imagebuild/dockerconvert"
	"github.com/jetbake/jetbake/builder/plan"
)

// Check runs the Dockerfile frontend's own checks (the "frontend.lint"
// subrequest, as `docker build --check`) on the router's Dockerfile with the
// build args of every selected release and SM target, on the first node. It
// returns every finding; the error is for checks that could not run.
func (b *Builder) Check(ctx context.Context, p *plan.Plan) ([]dockercheck.Finding, error) {
	if len(b.nodes) == 0 {
		return nil, errors.New("no BuildKit node to check on")
	}
	jobs, err := b.selectJobs(p)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var out []dockercheck.Finding
	for _, j := range jobs {
		mounts, err := j.localMounts("")
		if err != nil {
			return nil, err
		}
		buildBase := dockercheck.Arm64Manifest(ctx, j.buildBase, b.opts.remoteOpts)
		runtimeBase := dockercheck.Arm64Manifest(ctx, j.runtimeBase, b.opts.remoteOpts)
		opt := client.SolveOpt{LocalMounts: mounts, Session: b.opts.sessionAttach}
		_, err = b.nodes[0].Client.Build(ctx, opt, "jetbake", func(ctx context.Context, c gateway.Client) (*gateway.Result, error) {
			found, err := j.check(ctx, c, buildBase, runtimeBase)
			mu.Lock()
			out = append(out, found...)
			mu.Unlock()
			return gateway.NewResult(), err
		}, nil)
		if err != nil {
			return out, fmt.Errorf("release %s: check %s: %w", j.release.Name, j.dockerfile, err)
		}
	}
	return out, nil
}

// check lints the router stage for every target of the release, and its
// runtime stage; the bases are the arm64 manifests of the release's.
func (j *releaseJob) check(ctx context.Context, c gateway.Client, buildBase, runtimeBase string) ([]dockercheck.Finding, error) {
	inputs, err := dockerconvert.JetbakeContext(ctx, epochTime(j.opts.epoch), arm64Platform())
	if err != nil {
		return nil, err
	}
	// One lint per SM target of the router stage, and one of the runtime
	// stage (no SM) when the router names one.
	stages := slices.Clone(j.release.Targets)
	if j.plan.Router.RuntimeTarget != "" {
		stages = append(stages, plan.Target{})
	}
	found := make([][]dockercheck.Finding, len(stages))
	eg, ctx := errgroup.WithContext(ctx)
	for i, t := range stages {
		eg.Go(func() error {
			opts := j.routerOpts(t, buildBase)
			if t.SM == "" {
				opts = j.stageOpts(j.plan.Router.RuntimeTarget, j.runtimeArgs(buildBase, runtimeBase))
			}
			dockercheck.LintRequest(opts)
			res, err := c.Solve(ctx, gateway.SolveRequest{Frontend: "dockerfile.v0", FrontendOpt: opts, FrontendInputs: inputs})
			if err != nil && t.SM == "" {
				return fmt.Errorf("stage %s: %w", j.plan.Router.RuntimeTarget, err)
			}
			if err != nil {
				return fmt.Errorf("SM %s: %w", t.SM, err)
			}
			found[i], err = dockercheck.FromLintResult(res.Metadata["result.json"], j.release.Name, t.SM, j.dockerfileDir, j.dockerfile)
			if err != nil {
				return fmt.Errorf("SM %s: %w", t.SM, err)
			}
			return nil
		})
	}
	err = eg.Wait()
	var out []dockercheck.Finding
	for _, f := range found {
		out = append(out, f...)
	}
	return out, err
}

// frontendWarnings records the warnings of each release's session as its
// findings. They come from the Dockerfile frontend's checks when it builds
// the router stage itself (a "# syntax=" line); the converter inside
// jetbake reports its own through lintWarn, per SM target.
func frontendWarnings(jobs []*releaseJob) func(release string, w *client.VertexWarning) {
	byName := map[string]*releaseJob{}
	for _, j := range jobs {
		byName[j.release.Name] = j
	}
	return func(release string, w *client.VertexWarning) {
		j := byName[release]
		if j == nil {
			return
		}
		j.addFinding(dockercheck.FromWarning(release, filepath.Join(j.dockerfileDir, j.dockerfile), w))
	}
}
