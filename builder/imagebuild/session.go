package imagebuild

import (
	"context"
	"errors"
	"fmt"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/moby/buildkit/client"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/filesync"
	"github.com/moby/buildkit/session/grpchijack"
	"github.com/tonistiigi/fsutil"
	fstypes "github.com/tonistiigi/fsutil/types"
)

// sharedSession is one BuildKit session that every release's build on a
// node uses (buildx bake likewise serves a local folder that several
// targets use from one shared session): the releases' local sources (the
// router's context, its Dockerfile, the entrypoint) are the same folders,
// so BuildKit sends each once per build rather than once per release, and
// a release's build starts without a session handshake of its own.
type sharedSession struct {
	s    *session.Session
	done chan error
	// ended is closed when the session has ended (the daemon restarted,
	// the connection dropped): later builds on the node use their own.
	ended chan struct{}
}

// alive reports whether the session still runs.
func (ss *sharedSession) alive() bool {
	select {
	case <-ss.ended:
		return false
	default:
		return true
	}
}

// startSharedSession starts a session on c that serves mounts and attach.
// key names the local folders, as buildx names a build context by its
// path: BuildKit keeps the folders' last copy under it and sends only what
// changed since.
func startSharedSession(ctx context.Context, c *client.Client, key string, mounts map[string]fsutil.FS, attach []session.Attachable) (*sharedSession, error) {
	s, err := session.NewSession(context.WithoutCancel(ctx), key)
	if err != nil {
		return nil, fmt.Errorf("start a BuildKit session: %w", err)
	}
	dirs := filesync.StaticDirSource{}
	for name, fs := range mounts {
		// As BuildKit's client sends a local mount: files owned by root.
		filtered, err := fsutil.NewFilterFS(fs, &fsutil.FilterOpt{Map: func(_ string, st *fstypes.Stat) fsutil.MapResult {
			st.Uid, st.Gid = 0, 0
			return fsutil.MapResultKeep
		}})
		if err != nil {
			return nil, err
		}
		dirs[name] = filtered
	}
	s.Allow(filesync.NewFSSyncProvider(dirs))
	for _, a := range attach {
		s.Allow(a)
	}
	ss := &sharedSession{s: s, done: make(chan error, 1), ended: make(chan struct{})}
	go func() {
		ss.done <- s.Run(context.WithoutCancel(ctx), grpchijack.Dialer(c.ControlClient()))
		close(ss.ended)
	}()
	return ss, nil
}

// close ends the session and waits for it.
func (ss *sharedSession) close() {
	_ = ss.s.Close()
	<-ss.done
}

// sharedSessions are the shared sessions by node name.
type sharedSessions map[string]*sharedSession

// close ends every session.
func (s sharedSessions) close() {
	for _, ss := range s {
		ss.close()
	}
}

// deferredSmoke is a release's smoke run solved in a build of its own on
// the shared session, beside the export and push of the image, rather than
// before them: a release is only done, and tagged, once it passed.
type deferredSmoke struct {
	ctx     context.Context
	cancel  context.CancelFunc
	node    Node
	session *sharedSession
	job     *releaseJob
	display *progress.Display
	done    chan error // nil until the run was handed over
	// buildCtx and stopBuild are the release build's context and its
	// cancel; nil unless buildContext was called.
	buildCtx  context.Context
	stopBuild context.CancelCauseFunc
}

func newDeferredSmoke(ctx context.Context, n Node, ss *sharedSession, j *releaseJob, p *progress.Display) *deferredSmoke {
	ctx, cancel := context.WithCancel(ctx)
	return &deferredSmoke{ctx: ctx, cancel: cancel, node: n, session: ss, job: j, display: p}
}

// buildContext is the context of the release's build: a failed smoke run
// cancels it, with its error as the cause, so that the export and push
// stop rather than finish for nothing.
func (d *deferredSmoke) buildContext(ctx context.Context) context.Context {
	if d == nil {
		return ctx
	}
	ctx, d.stopBuild = context.WithCancelCause(ctx)
	d.buildCtx = ctx
	return ctx
}

// hand returns the function the release's build hands its smoke run to,
// or nil (solve it inline) when d is nil.
func (d *deferredSmoke) hand() func(*smokeRun) {
	if d == nil {
		return nil
	}
	return func(run *smokeRun) {
		d.done = make(chan error, 1)
		opt := client.SolveOpt{SharedSession: d.session.s, SessionPreInitialized: true,
			// A check of the build, not a build of its own: BuildKit keeps
			// no history record for it. Its steps show in the release's
			// progress.
			Internal: true}
		go func() {
			_, err := d.node.Client.Build(d.ctx, opt, "jetbake", func(ctx context.Context, c gateway.Client) (*gateway.Result, error) {
				return gateway.NewResult(), d.job.smokeCheck(ctx, c, run)
			}, d.display.Channel(d.job.release.Name))
			if err != nil && d.ctx.Err() == nil && d.stopBuild != nil {
				d.stopBuild(err)
			}
			d.done <- err
		}()
	}
}

// wait returns the smoke run's error when it failed (and so stopped the
// build), else buildErr, else the smoke run's error once it ended. A build
// that failed on its own stops the run.
func (d *deferredSmoke) wait(buildErr error) error {
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
