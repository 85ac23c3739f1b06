package bake

import (
	"context"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/gitcontext"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/plan"
)

// pins are the build's options from the lock file: the digest of every
// base and what each was read to hold, and the commit of the router's git
// context. Without a lock file the bases are built from their tags.
func (o Options) pins(ctx context.Context, p *plan.Plan, logf func(string, ...any)) ([]imagebuild.Option, error) {
	pinsOpts := lock.PinsOptions{File: o.LockFile, MatrixPath: o.MatrixPath, Check: o.CheckLock,
		Resolve: func(ref string) (string, error) { return o.Mirrors.Rewrite(ref, "") }}
	lf, err := lock.Pinned(ctx, p, pinsOpts, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, err
	}
	var locks map[string]string
	var opts []imagebuild.Option
	if lf != nil {
		locks = lf.Bases
		opts = append(opts, imagebuild.WithKnownBases(lf.Known()))
	}
	gitOpts, err := gitPinOptions(ctx, p, lf, pinsOpts, o, logf)
	if err != nil {
		return nil, err
	}
	return append(append(opts, imagebuild.WithLocks(locks)), gitOpts...), nil
}

// gitPinOptions are the build's options for the router's git context: the
// commit the lock file pins (checked against the remote with
// PinsOptions.Check), and the ids of the credentials given for it. A lock
// file that pins no commit for the context (one written before jetbake
// pinned git contexts) is used for its bases; the build says so and takes
// the commit the ref names.
func gitPinOptions(ctx context.Context, p *plan.Plan, lf *lock.File, pinsOpts lock.PinsOptions, o Options, logf func(string, ...any)) ([]imagebuild.Option, error) {
	c, ok := gitcontext.Parse(p.Context())
	if !ok {
		return nil, nil
	}
	opts := []imagebuild.Option{imagebuild.WithGitCredentials(o.GitCredentials...)}
	if lf == nil {
		return opts, nil // no lock file: the ref's commit now
	}
	path, _, err := pinsOpts.Path()
	if err != nil {
		return nil, err
	}
	pin, err := lf.GitPin(ctx, p, pinsOpts.Check, o.Secrets)
	if err != nil {
		return nil, err
	}
	switch {
	case pin.Commit != "":
		opts = append(opts, imagebuild.WithGitPin(pin.Commit, pin.Ref, path))
	case path != "" && c.Ref.Checksum == "":
		logf("warning: %s pins no commit for %s %q: building what its ref names now; run 'jetbake lock' to pin it", path, lock.ContextField(p), c.String())
	}
	return opts, nil
}
