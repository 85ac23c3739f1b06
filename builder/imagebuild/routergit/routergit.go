// Package routergit is the router's git context of a build, shared by its
// releases: the commit that pins it before the build (the lock file's, or
// the context's own checksum) and BuildKit's resolve of its ref to the
// commit every release then builds.
package routergit

import (
	"context"
	"errors"

	"github.com/moby/buildkit/client/llb/sourceresolver"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	gwpb "github.com/moby/buildkit/frontend/gateway/pb"

	"github.com/jetbake/jetbake/builder/gitcontext"
)

// PinnedByChecksum is Source.PinnedBy for a context that pins its own
// commit (?ref=...&checksum=...).
const PinnedByChecksum = "checksum"

// Source is the router's git context of a build.
type Source struct {
	Context   *gitcontext.Context
	Describer gitcontext.Describer
	// Pin is the lock file's commit, "" for none.
	Pin string
}

// New is the build's git source for context, nil for a local folder. The
// session's secrets credentials (their ids) are the context's credentials;
// commit, when given, pins it: the commit that the lock file lockFile
// recorded for its ref lockedRef. A context with a checksum of its own
// keeps that.
func New(context string, credentials []string, commit, lockedRef, lockFile string) *Source {
	c, ok := gitcontext.Parse(context)
	if !ok {
		return nil
	}
	s := &Source{Context: c, Describer: gitcontext.Describer{Context: c, Credentials: credentials}}
	if c.Ref.Checksum == "" && commit != "" {
		s.Pin = commit
		s.Describer.LockFile, s.Describer.LockedRef = lockFile, lockedRef
	}
	return s
}

// PinnedBy says what pinned the commit before the build: the lock file's
// path, PinnedByChecksum for the context's own, or "" for nothing.
func (s *Source) PinnedBy() string {
	switch {
	case s.Context.Ref.Checksum != "":
		return PinnedByChecksum
	case s.Pin != "":
		return s.Describer.LockFile
	}
	return ""
}

// CanResolve says whether the daemon of c resolves sources before it
// builds them.
func CanResolve(c gateway.Client) bool {
	caps := c.BuildOpts().Caps
	return caps.Supports(gwpb.CapSourceMetaResolver) == nil
}

// Resolve asks BuildKit's git source to list the remote's refs (with the
// session's credentials) and name the commit of pinned, the context with
// its pin: the commit checked out (an annotated tag's commit) and the full
// ref the context's ref resolved to. logName names the step.
func Resolve(ctx context.Context, c gateway.Client, pinned, logName string) (commit, ref string, err error) {
	op, err := gitcontext.SourceOp(ctx, pinned)
	if err != nil {
		return "", "", err
	}
	md, err := c.ResolveSourceMetadata(ctx, op, sourceresolver.Opt{LogName: logName})
	if err != nil {
		return "", "", err
	}
	if md.Git == nil || md.Git.Checksum == "" {
		return "", "", errors.New("BuildKit named no commit for it")
	}
	commit = md.Git.CommitChecksum // an annotated tag's commit
	if commit == "" {
		commit = md.Git.Checksum
	}
	return commit, md.Git.Ref, nil
}
