package smoke

import (
	"context"
	"errors"

	"github.com/moby/buildkit/client"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/session"
)

// Deferred is a release's smoke run solved in a build of its own on the
// release's shared session, beside the export and push of the image,
// rather than before them: a release is only done, and tagged, once it
// passed. A nil *Deferred solves nothing: the build runs its smoke run
// inline.
type Deferred struct {
	ctx     context.Context
	cancel  context.CancelFunc
	client  *client.Client
	session *session.Session
	status  func() chan *client.SolveStatus
	done    chan error // nil until the run was handed over
	// buildCtx and stopBuild are the release build's context and its
	// cancel; nil unless BuildContext was called.
	buildCtx  context.Context
	stopBuild context.CancelCauseFunc
}

// NewDeferred prepares a smoke run on c in the shared session s; status
// gives the channel the run's progress goes to.
func NewDeferred(ctx context.Context, c *client.Client, s *session.Session, status func() chan *client.SolveStatus) *Deferred {
	ctx, cancel := context.WithCancel(ctx)
	return &Deferred{ctx: ctx, cancel: cancel, client: c, session: s, status: status}
}

// BuildContext is the context of the release's build: a failed smoke run
// cancels it, with its error as the cause, so that the export and push
// stop rather than finish for nothing.
func (d *Deferred) BuildContext(ctx context.Context) context.Context {
	if d == nil {
		return ctx
	}
	ctx, d.stopBuild = context.WithCancelCause(ctx)
	d.buildCtx = ctx
	return ctx
}

// Hand starts check, the smoke run, in a build of its own; a failure
// cancels the release's build (see BuildContext).
func (d *Deferred) Hand(check func(ctx context.Context, c gateway.Client) error) {
	d.done = make(chan error, 1)
	opt := client.SolveOpt{SharedSession: d.session, SessionPreInitialized: true,
		// A check of the build, not a build of its own: BuildKit keeps
		// no history record for it. Its steps show in the release's
		// progress.
		Internal: true}
	go func() {
		_, err := d.client.Build(d.ctx, opt, "jetbake", func(ctx context.Context, c gateway.Client) (*gateway.Result, error) {
			return gateway.NewResult(), check(ctx, c)
		}, d.status())
		if err != nil && d.ctx.Err() == nil && d.stopBuild != nil {
			d.stopBuild(err)
		}
		d.done <- err
	}()
}

// Wait returns the smoke run's error when it failed (and so stopped the
// build), else buildErr, else the smoke run's error once it ended. A build
// that failed on its own stops the run.
func (d *Deferred) Wait(buildErr error) error {
	if d == nil {
		return buildErr
	}
	defer d.cancel()
	if d.stopBuild != nil {
		defer d.stopBuild(nil)
	}
	if d.done == nil {
		return buildErr
	}
	if buildErr != nil {
		if d.buildCtx != nil && d.buildCtx.Err() != nil {
			if cause := context.Cause(d.buildCtx); cause != nil && !errors.Is(cause, context.Canceled) {
				<-d.done
				return cause
			}
		}
		d.cancel()
		<-d.done
		return buildErr
	}
	return <-d.done
}
