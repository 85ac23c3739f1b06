package imagebuild

import (
	"context"
	"time"

	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/routergit"
)

// RouterSource is the commit a release's router was built from, when the
// router's context is a git repository.
type RouterSource struct {
	// Context is the context as the matrix writes it, credentials masked.
	Context string `json:"context"`
	// Ref is the full ref BuildKit resolved the context's ref to
	// ("refs/tags/v1.8.0", "refs/heads/release-1.8"), or the commit a
	// context names itself; empty when the daemon cannot resolve sources
	// before it builds.
	Ref string `json:"ref,omitempty"`
	// Commit is the commit BuildKit checked out: an annotated tag's commit.
	Commit string `json:"commit,omitempty"`
	// PinnedBy says what pinned the commit before the build: the lock
	// file's path, "checksum" for the context's own
	// (routergit.PinnedByChecksum), or "" for nothing (the build took what
	// the ref named).
	PinnedBy string `json:"pinned_by,omitempty"`
}

// gitPin is what WithGitPin gives.
type gitPin struct{ commit, ref, lockFile string }

// WithGitPin pins the router's git context to commit, which the lock file
// lockFile recorded for its ref (lockedRef, e.g. "refs/tags/v1.8.0"):
// the build then fails, naming both commits, when the ref names another
// commit. A context with a checksum of its own keeps that.
func WithGitPin(commit, lockedRef, lockFile string) Option {
	return func(o *options) { o.gitPin = gitPin{commit, lockedRef, lockFile} }
}

// WithGitCredentials names the secrets the build's session holds for the
// router's git context (their ids, never their values), so that its
// failures tell a refused credential from a missing one.
func WithGitCredentials(ids ...string) Option {
	return func(o *options) { o.gitCredentials = ids }
}

// newGitSource is the build's git source for context
// (routergit.New), nil for a local folder.
func (o *options) newGitSource(context string) *routergit.Source {
	return routergit.New(context, o.gitCredentials, o.gitPin.commit, o.gitPin.ref, o.gitPin.lockFile)
}

// resolveGitContext resolves the router's git context once per build, as
// base references are: BuildKit's git source lists the remote's refs
// (with the session's credentials) and names the commit, which every
// release of the build then builds, pinned, even if the ref moves during
// the build. The lock file's commit, when there is one, is pinned before:
// a ref that moved since fails here. Daemons that cannot resolve sources
// before a build resolve the context while they build it.
func (j *releaseJob) resolveGitContext(ctx context.Context, c gateway.Client) error {
	g := j.git
	if g == nil {
		return nil
	}
	j.mu.Lock()
	j.gitErr = nil
	j.mu.Unlock()
	pinned := g.Context.Pinned(g.Pin)
	src := &RouterSource{Context: g.Context.String(), PinnedBy: g.PinnedBy()}
	if !routergit.CanResolve(c) {
		j.setRouterSource(pinned, src)
		return nil
	}
	commit, ref, err := j.resolved.Get(ctx, "git\x00"+pinned, func() (string, []byte, error) {
		defer j.timings.Record(progress.PhaseResolve, time.Now())
		commit, ref, err := routergit.Resolve(ctx, c, pinned, "resolve router source "+src.Context)
		if err != nil {
			return "", nil, err
		}
		return commit, []byte(ref), nil
	})
	if err != nil {
		err = g.Describer.Describe(err)
		j.mu.Lock()
		j.gitErr = err // as written here, not as it comes back through BuildKit
		j.mu.Unlock()
		return err
	}
	src.Ref, src.Commit = string(ref), commit
	j.setRouterSource(g.Context.Pinned(commit), src)
	return nil
}

// setRouterSource records the context the router is built from and what
// it was resolved to.
func (j *releaseJob) setRouterSource(context string, src *RouterSource) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.routerContextPinned, j.routerSource = context, src
}

// routerContext is the git context handed to the Dockerfile frontend: the
// matrix's, pinned to its commit once resolved.
func (j *releaseJob) routerContext() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.routerContextPinned != "" {
		return j.routerContextPinned
	}
	return j.gitContext
}

// describeGitError is err in one sentence when it is a failure of the
// router's git context (see gitcontext.Describer), else err.
func (j *releaseJob) describeGitError(err error) error {
	if j.git == nil || err == nil {
		return err
	}
	j.mu.Lock()
	resolveErr := j.gitErr
	j.mu.Unlock()
	if resolveErr != nil {
		return resolveErr
	}
	if d := j.git.Describer.Describe(err); d != err {
		return d
	}
	return err
}
