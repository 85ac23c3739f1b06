package imagebuild

import (
	"context"
	"fmt"
	"path"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/gatewayfile"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/builder/plan"
)

// readBinaries builds every router of run and reads its ELF header,
// program headers and dynamic section through the gateway, a few
// kilobytes, not the whole binary (TEI's router is hundreds of megabytes).
func (j *releaseJob) readBinaries(ctx context.Context, c gateway.Client, run *smokeRun) ([]smoke.Binary, error) {
	out := make([]smoke.Binary, len(j.release.Targets))
	for i, t := range j.release.Targets {
		out[i] = smoke.Binary{Binary: path.Base(t.Path), SM: t.SM}
		r, err := j.openRouter(ctx, c, run.routers[i], t, run.imports)
		if err != nil {
			return nil, err
		}
		out[i].Needed, out[i].Interpreter, err = gatewayfile.ReadELF(r)
		if err != nil {
			out[i].NotELF = err.Error()
		}
	}
	return out, nil
}

// openRouters builds every router stage and opens its output, in target
// order.
func (j *releaseJob) openRouters(ctx context.Context, c gateway.Client, routers []llb.State, imports []gateway.CacheOptionsEntry) ([]*gatewayfile.Reader, error) {
	out := make([]*gatewayfile.Reader, len(routers))
	for i, t := range j.release.Targets {
		r, err := j.openRouter(ctx, c, routers[i], t, imports)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// openRouter builds the router stage st of target t and opens its output
// for ranged reads through the gateway.
func (j *releaseJob) openRouter(ctx context.Context, c gateway.Client, st llb.State, t plan.Target, imports []gateway.CacheOptionsEntry) (*gatewayfile.Reader, error) {
	def, err := st.Marshal(ctx, llb.Platform(arm64Platform()))
	if err != nil {
		return nil, err
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true, CacheImports: imports})
	if err != nil {
		return nil, j.compileError(t, err)
	}
	ref, err := res.SingleRef()
	if err != nil {
		return nil, err
	}
	r, err := gatewayfile.Open(ctx, ref, j.plan.Router.Output)
	if err != nil {
		return nil, fmt.Errorf("%s: the router stage has no %s: %w", t.Arch, j.plan.Router.Output, err)
	}
	return r, nil
}
