// Package prepull pulls a release's base images into the BuildKit daemon
// ahead of the solves that use them, as a build of a whole Dockerfile
// starts its pulls at once: jetbake resolves the bases, checks what they
// hold and converts the Dockerfile first, and the pulls would otherwise
// wait for all three.
package prepull

import (
	"context"
	"sync"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// Pulls are the pulls of one release's build, each of one image state.
type Pulls struct {
	ctx      context.Context
	cancel   context.CancelFunc
	c        gateway.Client
	platform ocispecs.Platform
	wg       sync.WaitGroup
}

// New returns the pulls of a build on c, each image for platform.
func New(ctx context.Context, c gateway.Client, platform ocispecs.Platform) *Pulls {
	ctx, cancel := context.WithCancel(ctx)
	return &Pulls{ctx: ctx, cancel: cancel, c: c, platform: platform}
}

// Add starts image's step in the daemon: BuildKit resolves the image and
// readies its layers in its cache, where the solve that uses the same
// image finds them, readied or being readied (it unpacks them once a step
// first mounts them). A pull compiles nothing. Its error is dropped: the
// solve that uses the image meets it again and says it.
func (p *Pulls) Add(image llb.State) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		def, err := image.Marshal(p.ctx, llb.Platform(p.platform))
		if err != nil {
			return
		}
		_, _ = p.c.Solve(p.ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true})
	}()
}

// Stop stops the pulls still going and waits for them.
func (p *Pulls) Stop() {
	p.cancel()
	p.wg.Wait()
}
