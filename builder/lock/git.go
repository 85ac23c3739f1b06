package lock

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/moby/buildkit/session/secrets"
	"github.com/moby/buildkit/util/gitutil"

	"github.com/jetbake/jetbake/builder/gitcontext"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

// GitPin is the commit a git context's ref named when it was locked.
type GitPin struct {
	// Ref is the full ref the context's ref resolved to, e.g.
	// "refs/tags/v1.8.0", or the commit a context names itself.
	Ref string `json:"ref"`
	// Commit is the commit checked out: an annotated tag's commit, not
	// the tag object.
	Commit string `json:"commit"`
}

// lockFetcher is who fetches when jetbake lock resolves a git context.
const lockFetcher = "this machine (jetbake resolves the ref with git ls-remote)"

// ResolveGit resolves the git context of p (the router's, or the app's),
// when it has one, to
// the commit its ref names now, as BuildKit will resolve it (see
// gitcontext.Context.Resolve), with the git credentials in store (nil for
// none). It returns nil for a local folder.
func ResolveGit(ctx context.Context, p *plan.Plan, store secrets.SecretStore) (map[string]GitPin, error) {
	c, ok := gitcontext.Parse(p.Context())
	if !ok {
		return nil, nil
	}
	got, err := c.Resolve(ctx, store, gitcontext.Describer{Fetcher: lockFetcher})
	if err != nil {
		return nil, err
	}
	return map[string]GitPin{p.Context(): {Ref: got.Ref, Commit: got.Commit}}, nil
}

// ContextField is the matrix's field for p's build context.
func ContextField(p *plan.Plan) string {
	if p.App != nil {
		return "app.context"
	}
	return "router.context"
}

// CheckGit resolves the git context of p (the router's or the app's) again and reports a ref
// that has moved from the commit f pins, a context f does not pin, and
// pins of contexts p no longer uses.
func (f *File) CheckGit(ctx context.Context, p *plan.Plan, store secrets.SecretStore) error {
	now, err := ResolveGit(ctx, p, store)
	if err != nil {
		return err
	}
	field := ContextField(p)
	var moved []string
	for context, pin := range now {
		shown := gitcontext.Redact(context)
		switch locked, ok := f.GitContexts[context]; {
		case !ok:
			moved = append(moved, fmt.Sprintf("%s %s is not in the lock file", field, shown))
		case locked.Commit != pin.Commit:
			moved = append(moved, fmt.Sprintf("%s %s: the %s %s moved from %s to %s", field, shown,
				gitcontext.RefKind(locked.Ref), gitcontext.RefName(locked.Ref), locked.Commit, pin.Commit))
		}
	}
	var unused []string
	for context := range f.GitContexts {
		if _, ok := now[context]; !ok {
			unused = append(unused, fmt.Sprintf("%s %s is pinned but the matrix does not use it", field, gitcontext.Redact(context)))
		}
	}
	slices.Sort(unused)
	if moved = append(moved, unused...); len(moved) > 0 {
		return fmt.Errorf("the lock file is stale: %s; run 'jetbake lock' to pin the new commit after checking it", strings.Join(moved, "; "))
	}
	return nil
}

// GitPinned is the commit a build of p pins its git context (the router's
// or the app's) to:
// the lock file's (see Pins for which file), with its path; "" when p's
// context is a local folder, there is no lock file, or it does not pin the
// context (written before jetbake pinned git contexts): the build then
// takes the commit the ref names. With o.Check the ref is resolved again,
// with the credentials in store, and a moved ref or a missing pin fails.
func GitPinned(ctx context.Context, p *plan.Plan, o PinsOptions, store secrets.SecretStore) (pin GitPin, path string, err error) {
	if _, ok := gitcontext.Parse(p.Context()); !ok {
		return GitPin{}, "", nil
	}
	path, ok, err := o.Path()
	if err != nil || !ok {
		return GitPin{}, "", err // without a file, Pinned says what a check needs
	}
	lf, err := Read(path)
	if err != nil {
		return GitPin{}, "", err
	}
	pin, err = lf.GitPin(ctx, p, o.Check, store)
	return pin, path, err
}

// GitPin is the commit f pins p's git context to, "" when it pins
// none; with check the ref is resolved again, with the credentials in
// store, and a moved ref or a missing pin fails.
func (f *File) GitPin(ctx context.Context, p *plan.Plan, check bool, store secrets.SecretStore) (GitPin, error) {
	if check {
		if err := f.CheckGit(ctx, p, store); err != nil {
			return GitPin{}, err
		}
	}
	return f.GitContexts[p.Context()], nil
}

// checkGitContexts checks the git_contexts of a lock file that Read decoded.
func checkGitContexts(doc *matrix.Document, f *File) error {
	contexts := make([]string, 0, len(f.GitContexts))
	for c := range f.GitContexts {
		contexts = append(contexts, c)
	}
	slices.Sort(contexts)
	for _, c := range contexts {
		path := matrix.MemberPath("git_contexts", c)
		pin := f.GitContexts[c]
		if _, ok := gitcontext.Parse(c); !ok {
			return doc.Problem(path, "", "is not a git context", "")
		}
		if !gitutil.IsCommitSHA(pin.Commit) {
			return doc.Problem(matrix.MemberPath(path, "commit"), computecap.QuoteShort(pin.Commit), "is not a full commit (40 or 64 hex digits)", "")
		}
		if pin.Ref == "" {
			return doc.Problem(matrix.MemberPath(path, "ref"), "", "is missing", "")
		}
	}
	return nil
}
