package imagebuild

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerui"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/imagebuild/dockerconvert"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/dockerfiles"
)

// convertRouters turns the router stage into LLB for every SM target inside
// jetbake, with BuildKit's own Dockerfile converter (dockerfile2llb, the code
// the dockerfile.v0 frontend runs): the Dockerfile is read once, there is no
// frontend call per SM target, and the converter's base image lookups are
// served by the build's resolve cache, so the build base is resolved once
// per build rather than once more per target. The states go straight into
// the runtime image's definition: one solve per release.
//
// The build context is the local folder, or the git source, that the
// frontend would use (dockerui's own git parsing; a git context has no
// .dockerignore, as with the frontend). It returns ok=false when the
// frontend must do it: a "# syntax=" line asks for another frontend.
func (j *releaseJob) convertRouters(ctx context.Context, c gateway.Client, buildBase string) (states []llb.State, ok bool, err error) {
	defer j.timings.Record(progress.PhaseFrontend, time.Now())
	dt, err := inputfile.Read(filepath.Join(j.dockerfileDir, j.dockerfile), "the router's Dockerfile")
	if err != nil {
		return nil, false, err
	}
	if _, _, _, syntax := parser.DetectSyntax(dt); syntax {
		return nil, false, nil
	}
	bc, err := j.converterClient(ctx, c, buildBase)
	if err != nil {
		return nil, true, err
	}
	states = make([]llb.State, len(j.release.Targets))
	for i, t := range j.release.Targets {
		res, err := dockerfile2llb.Dockerfile2LLB(ctx, dt, dockerconvert.Opt(c, bc, j.resolved, arm64Platform(), j.plan.Router.Target, j.routerArgs(t, buildBase), j.lintWarn(t)))
		if err != nil {
			return nil, true, fmt.Errorf("compile %s for %s: %s: %w", j.plan.Router.Name, t.Arch, filepath.Join(j.dockerfileDir, j.dockerfile), err)
		}
		states[i] = res.State
	}
	return states, true, nil
}

// lintWarn records the Dockerfile checks' warnings for t as findings: the
// converter runs BuildKit's checks as the dockerfile.v0 frontend does while
// it builds, so a build needs no separate check pass. An error of the
// checks (a "check=error=true" directive) fails the conversion itself.
func (j *releaseJob) lintWarn(t plan.Target) linter.LintWarnFunc {
	return dockercheck.FromConverter(j.release.Name, t.SM, filepath.Join(j.dockerfileDir, j.dockerfile), j.addFinding)
}

// converterClient gives the converter what the dockerfile.v0 frontend gets
// from jetbake: the frontend options of the router stage (the main context,
// local or git, and the jetbake named context) and the jetbake context as a
// frontend input. dockerui then reads the main context, its .dockerignore
// and `COPY --from=jetbake` exactly as the frontend does.
func (j *releaseJob) converterClient(ctx context.Context, c gateway.Client, buildBase string) (*dockerui.Client, error) {
	if len(j.release.Targets) == 0 {
		return nil, fmt.Errorf("release %s has no SM targets", j.release.Name)
	}
	opts := j.routerOpts(j.release.Targets[0], buildBase)
	inputs := map[string]llb.State{dockerfiles.ContextName: dockerconvert.JetbakeContextState(epochTime(j.opts.epoch))}
	base, err := j.crossRecipeBase(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := base.AddTo(opts, inputs); err != nil {
		return nil, err
	}
	bc, err := dockerconvert.Client(c, opts, inputs)
	if err != nil {
		return nil, fmt.Errorf("router context: %w", err)
	}
	return bc, nil
}
