package imagebuild

import (
	"context"
	"fmt"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/plan"
)

// beside runs work while the daemon builds every part of a release that
// work may wait on: each router and each of also (the runtime stage, the
// smoke run's driver stub), and waits for them all; the first error wins. Work
// that reads one result at a time (the audit and the smoke run read the
// routers one after the other) then holds back no other part: a release's
// SM targets compile at once, and its runtime stage builds beside them,
// not after them, as a build of the whole image would have them.
func (j *releaseJob) beside(ctx context.Context, c gateway.Client, imports []gateway.CacheOptionsEntry,
	routers []llb.State, work func(context.Context) error, also ...llb.State) error {
	eg, egCtx := errgroup.WithContext(ctx)
	for i, st := range routers {
		t := j.release.Targets[i]
		eg.Go(func() error {
			if err := evaluate(egCtx, c, st, imports); err != nil {
				return j.compileError(t, err)
			}
			return nil
		})
	}
	for _, st := range also {
		eg.Go(func() error { return evaluate(egCtx, c, st, imports) })
	}
	eg.Go(func() error { return work(egCtx) })
	return eg.Wait()
}

// evaluate builds st in the daemon; the result stays in its cache for the
// solves that use it.
func evaluate(ctx context.Context, c gateway.Client, st llb.State, imports []gateway.CacheOptionsEntry) error {
	def, err := st.Marshal(ctx, llb.Platform(arm64Platform()))
	if err != nil {
		return err
	}
	_, err = c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true, CacheImports: imports})
	return err
}

// compileError is a router build's error, naming the target.
func (j *releaseJob) compileError(t plan.Target, err error) error {
	return fmt.Errorf("compile %s for %s: %w", j.plan.Router.Name, t.Arch, err)
}
