// Package tagging puts a build's tags on the digests its releases were
// pushed by, as one unit as far as a registry allows, and rolls back the
// tags it moved when one fails.
package tagging

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/refs"
)

// Release is one release's tags and the digest its push returned.
type Release struct {
	// Name is the release, as errors name it.
	Name string
	// Repository is where it was pushed.
	Repository string
	// Digest is what its push returned; "" is an error, and nothing moves.
	Digest string
	// Tags are the references to put on Digest.
	Tags []string
}

// tagMove is one tag to put on a built digest, and what it pointed at before.
type tagMove struct {
	release int
	tag     name.Tag
	desc    *remote.Descriptor
	old     *remote.Descriptor // nil when the tag is new
	// same is set when the tag already points at the digest: nothing moves.
	same bool
}

// tagConcurrency is how many registry requests tagging keeps in flight: a
// matrix of many releases is tagged in a few round trips' time, not one per tag.
const tagConcurrency = 16

// All puts every release's tags on the digest it was pushed by, as one
// unit as far as a registry allows: it first fetches every built descriptor
// and every tag's current target, so that nothing moves unless all can; if a
// tag then fails to move, it puts the moved ones back (or deletes those that
// were new) and says which, if any, it could not restore. It returns the
// tags put on each release's digest, in the order of releases.
func All(ctx context.Context, releases []Release, ropts []remote.Option) ([][]string, error) {
	ropts = append([]remote.Option{remote.WithContext(ctx)}, ropts...)
	// One puller and one pusher for every call: each pings the registry
	// and authenticates once per repository, not once per tag.
	puller, err := remote.NewPuller(ropts...)
	if err != nil {
		return nil, fmt.Errorf("%w; no tag was moved", refs.DescribeRegistryError("read the pushed images before tagging", err))
	}
	pusher, err := remote.NewPusher(ropts...)
	if err != nil {
		return nil, fmt.Errorf("%w; no tag was moved", refs.DescribeRegistryError("put the tags", err))
	}
	getOpts := append(slices.Clone(ropts), remote.Reuse(puller))
	ropts = append(slices.Clone(ropts), remote.Reuse(pusher))
	moves, err := planTagMoves(releases, getOpts)
	if err != nil {
		return nil, fmt.Errorf("%w; no tag was moved", err)
	}
	moved := make([]bool, len(moves))
	errs := make([]error, len(moves))
	forEach(len(moves), func(i int) {
		if moves[i].same {
			return
		}
		if errs[i] = remote.Tag(moves[i].tag, moves[i].desc, ropts...); errs[i] == nil {
			moved[i] = true
		}
	})
	if i := slices.IndexFunc(errs, func(e error) bool { return e != nil }); i >= 0 {
		var back []tagMove
		for k, m := range moves {
			if moved[k] {
				back = append(back, m)
			}
		}
		left := rollback(back, ropts)
		what := fmt.Sprintf("put tag %s of release %s", moves[i].tag, releases[moves[i].release].Name)
		return nil, &Error{err: firstOf(errs, func(err error) error { return describePut(what, err) }, "tags"), moved: len(back), left: left}
	}
	tags := make([][]string, len(releases))
	for i := range tags {
		tags[i] = []string{}
	}
	for _, m := range moves {
		tags[m.release] = append(tags[m.release], m.tag.String())
	}
	return tags, nil
}

// planTagMoves finds every tag's move, many requests at a time: it asks
// where each tag points now (a HEAD), and fetches, for the tags that must
// move, what each will point at and what it pointed at before. A tag
// already on its release's digest (a rebuild that changed nothing) stays
// as it is. The moves are in plan and tag order.
func planTagMoves(releases []Release, ropts []remote.Option) ([]tagMove, error) {
	var moves []tagMove
	for i, r := range releases {
		if r.Digest == "" {
			return nil, fmt.Errorf("release %s: the push returned no digest", r.Name)
		}
		for _, t := range r.Tags {
			tag, err := name.NewTag(t)
			if err != nil {
				return nil, fmt.Errorf("release %s: tag %q: %w", r.Name, t, err)
			}
			moves = append(moves, tagMove{release: i, tag: tag})
		}
	}
	errs := make([]error, len(moves))
	existing := make([]bool, len(moves))
	forEach(len(moves), func(k int) {
		m := &moves[k]
		head, err := remote.Head(m.tag, ropts...)
		if err != nil && !isNotFound(err) {
			// A registry may answer HEAD without Docker-Content-Digest;
			// go-containerregistry's advice is to ask with GET then.
			var desc *remote.Descriptor
			if desc, err = remote.Get(m.tag, ropts...); err == nil {
				head = &desc.Descriptor
			}
		}
		switch {
		case err == nil:
			existing[k] = true
			m.same = head.Digest.String() == releases[m.release].Digest
		case !isNotFound(err):
			errs[k] = refs.DescribeRegistryError(fmt.Sprintf("read tag %s of release %s before moving it", m.tag, releases[m.release].Name), err)
		}
	})
	if err := firstOf(errs, nil, "tags"); err != nil {
		return nil, err
	}
	return moves, fetchMoves(moves, existing, releases, ropts)
}

// firstOf is the first error of errs, described by describe when it is
// not nil, saying how many more (what: "tags") failed: the tags of one registry fail
// alike (a name that does not resolve, a refused login), and one sentence
// says it.
func firstOf(errs []error, describe func(error) error, what string) error {
	var first error
	more := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case first == nil:
			first = err
		default:
			more++
		}
	}
	if first != nil && describe != nil {
		first = describe(first)
	}
	if first != nil && more > 0 {
		return fmt.Errorf("%w (and %d more %s)", first, more, what)
	}
	return first
}

// Error is a tag that failed to move after others moved: the registry's
// failure in one sentence, and what the rollback did.
type Error struct {
	err   error
	moved int
	left  []string
}

// Error writes the sentence: "cannot put tag ...: the registry answered
// 403 Forbidden to PUT ...; fix: ...; the 2 tags moved were put back".
func (e *Error) Error() string {
	var msg string
	switch e.moved {
	case 0:
		msg = fmt.Sprintf("%v; no tag was moved", e.err)
	case 1:
		msg = fmt.Sprintf("%v; the 1 tag moved was put back", e.err)
	default:
		msg = fmt.Sprintf("%v; the %d tags moved were put back", e.err, e.moved)
	}
	if len(e.left) > 0 {
		msg += "; could not restore " + strings.Join(e.left, ", ") + ": put them back by hand"
	}
	return msg
}

// describePut is the registry's refusal of a tag call in one sentence;
// a refused login's fix is about pushing, not reading.
func describePut(what string, err error) error {
	err = refs.DescribeRegistryError(what, err)
	var rerr *refs.RegistryError
	if errors.As(err, &rerr) && (rerr.Status == http.StatusUnauthorized || rerr.Status == http.StatusForbidden) {
		rerr.Fix = "log in with 'docker login REGISTRY', or check that your account may push to the repository"
	}
	return err
}

// Unwrap returns the registry's error (a *refs.RegistryError).
func (e *Error) Unwrap() error { return e.err }

// fetchMoves fetches, for the moves that are not already in place, the
// descriptor each tag will point at and the one it points at now.
func fetchMoves(moves []tagMove, existing []bool, releases []Release, ropts []remote.Option) error {
	descs := make([]*remote.Descriptor, len(releases))
	for _, m := range moves {
		if !m.same {
			descs[m.release] = &remote.Descriptor{} // wanted
		}
	}
	errs := make([]error, len(releases)+len(moves))
	forEach(len(releases)+len(moves), func(k int) {
		if k < len(releases) {
			if descs[k] == nil {
				return
			}
			r := releases[k]
			ref, err := name.NewDigest(r.Repository + "@" + r.Digest)
			if err != nil {
				errs[k] = fmt.Errorf("release %s: the push returned %s@%s, which is not an image reference", r.Name,
					refs.Printable(r.Repository), refs.Printable(r.Digest))
				return
			}
			if descs[k], err = remote.Get(ref, ropts...); err != nil {
				errs[k] = refs.DescribeRegistryError(fmt.Sprintf("read %s, which release %s was pushed as, before tagging it", ref, r.Name), err)
			}
			return
		}
		i := k - len(releases)
		if m := &moves[i]; !m.same && existing[i] {
			old, err := remote.Get(m.tag, ropts...)
			if err != nil {
				errs[k] = refs.DescribeRegistryError(fmt.Sprintf("read tag %s of release %s before moving it", m.tag, releases[m.release].Name), err)
			}
			m.old = old
		}
	})
	if err := firstOf(errs, nil, "reads"); err != nil {
		return err
	}
	for k := range moves {
		moves[k].desc = descs[moves[k].release]
	}
	return nil
}

// forEach calls f for 0..n-1, tagConcurrency calls at a time, and waits
// for all; f keeps its own error per index, so that every failure is
// reported, not only the first.
func forEach(n int, f func(i int)) {
	var g errgroup.Group
	g.SetLimit(tagConcurrency)
	for i := range n {
		g.Go(func() error { f(i); return nil })
	}
	_ = g.Wait()
}

// rollback restores moved tags, newest first, and lists those it could not.
func rollback(moved []tagMove, ropts []remote.Option) []string {
	var left []string
	for i := len(moved) - 1; i >= 0; i-- {
		m := moved[i]
		var err error
		if m.old != nil {
			err = remote.Tag(m.tag, m.old, ropts...)
		} else {
			err = remote.Delete(m.tag, ropts...)
		}
		if err != nil {
			left = append(left, m.tag.String())
		}
	}
	return left
}

func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}
