package prepull

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/solver/pb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
)

// daemon records the solves it is asked for; each blocks until its context
// ends when block is set, and fails otherwise.
type daemon struct {
	gateway.Client
	block bool
	mu    sync.Mutex
	reqs  []gateway.SolveRequest
}

func (d *daemon) Solve(ctx context.Context, req gateway.SolveRequest) (*gateway.Result, error) {
	d.mu.Lock()
	d.reqs = append(d.reqs, req)
	d.mu.Unlock()
	if d.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, errors.New("pull access denied")
}

var arm64 = ocispecs.Platform{OS: "linux", Architecture: "arm64"}

// Each image is solved once, evaluated for its platform; a failed pull is
// left to the solve that uses the image.
func TestAddPullsEachImage(t *testing.T) {
	d := &daemon{}
	p := New(t.Context(), d, arm64)
	p.Add(llb.Image("127.0.0.1:5000/nvidia/l4t-cuda:12.6.11-runtime@sha256:" + sha))
	p.Add(llb.Image("127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@sha256:" + sha))
	p.Stop()
	require.Len(t, d.reqs, 2)
	var refs []string
	for _, req := range d.reqs {
		require.True(t, req.Evaluate)
		for _, dt := range req.Definition.Def {
			var op pb.Op
			require.NoError(t, op.UnmarshalVT(dt))
			if src := op.GetSource(); src != nil {
				refs = append(refs, src.Identifier)
				require.Equal(t, "arm64", op.Platform.Architecture)
			}
		}
	}
	require.ElementsMatch(t, []string{"docker-image://127.0.0.1:5000/nvidia/l4t-cuda:12.6.11-runtime@sha256:" + sha,
		"docker-image://127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@sha256:" + sha}, refs)
}

// Stop ends the pulls still going and returns once they have.
func TestStopEndsPulls(t *testing.T) {
	d := &daemon{block: true}
	p := New(t.Context(), d, arm64)
	p.Add(llb.Image("127.0.0.1:5000/nvidia/l4t-cuda:12.6.11-runtime"))
	require.Eventually(t, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.reqs) == 1
	}, 5e9, 1e6)
	p.Stop()
	require.ErrorIs(t, p.ctx.Err(), context.Canceled)
}

const sha = "c3c4cc5163aba664738e6b038852ecd8915f33470cf998c531dd307acd43aaaa"
