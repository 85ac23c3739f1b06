package imagebuild

import (
	"context"
	"errors"
	"time"

	"github.com/moby/buildkit/client/llb/sourceresolver"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	gwpb "github.com/moby/buildkit/frontend/gateway/pb"

	"github.com/jetbake/jetbake/builder/gitcontext"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// PinnedByChecksum is RouterSource.PinnedBy for a context that pins its
// own commit (?ref=...&checksum=...).
const PinnedByChecksum = "checksum"

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
	// file's path, "checksum" for the context's own, or "" for nothing (the
	// build took what the ref named).
	PinnedBy string `json:"pinned_by,omitempty"`
}

// gitSource is the router's git context of a build, shared by its releases.
type gitSource struct {
	context   *gitcontext.Context
	describer gitcontext.Describer
	// pin is the lock file's commit, "" for none.
	pin string
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

// newGitSource is the build's git source for context, nil for a local folder.
func (o *options) newGitSource(context string) *gitSource {
	c, ok := gitcontext.Parse(context)
	if !ok {
		return nil
	}
	g := &gitSource{context: c, describer: gitcontext.Describer{Context: c, Credentials: o.gitCredentials}}
	if c.Ref.Checksum == "" && o.gitPin.commit != "" {
		g.pin = o.gitPin.commit
		g.describer.LockFile, g.describer.LockedRef = o.gitPin.lockFile, o.gitPin.ref
	}
	return g
}

// pinnedBy is RouterSource.PinnedBy before the build.
func (g *gitSource) pinnedBy() string {
	switch {
	case g.context.Ref.Checksum != "":
		return PinnedByChecksum
	case g.pin != "":
		return g.describer.LockFile
	}
	return ""
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
	pinned := g.context.Pinned(g.pin)
	src := &RouterSource{Context: g.context.String(), PinnedBy: g.pinnedBy()}
	if caps := c.BuildOpts().Caps; caps.Supports(gwpb.CapSourceMetaResolver) != nil {
		j.setRouterSource(pinned, src)
		return nil
	}
	commit, ref, err := j.resolved.Get(ctx, "git\x00"+pinned, func() (string, []byte, error) {
		defer j.timings.Record(progress.PhaseResolve, time.Now())
		op, err := gitcontext.SourceOp(ctx, pinned)
		if err != nil {
			return "", nil, err
		}
		md, err := c.ResolveSourceMetadata(ctx, op, sourceresolver.Opt{LogName: "resolve router source " + src.Context})
		if err != nil {
			return "", nil, err
		}
		if md.Git == nil || md.Git.Checksum == "" {
			return "", nil, errors.New("BuildKit named no commit for it")
		}
		commit := md.Git.CommitChecksum // an annotated tag's commit
		if commit == "" {
			commit = md.Git.Checksum
		}
		return commit, []byte(md.Git.Ref), nil
	})
	if err != nil {
		err = g.describer.Describe(err)
		j.mu.Lock()
		j.gitErr = err // as written here, not as it comes back through BuildKit
		j.mu.Unlock()
		return err
	}
	src.Ref, src.Commit = string(ref), commit
	j.setRouterSource(g.context.Pinned(commit), src)
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
	if d := j.git.describer.Describe(err); d != err {
		return d
	}
	return err
}
