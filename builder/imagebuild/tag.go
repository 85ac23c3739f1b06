package imagebuild

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
)

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

// tagAll puts every release's tags on the digest it was pushed by, as one
// unit as far as a registry allows: it first fetches every built descriptor
// and every tag's current target, so that nothing moves unless all can; if a
// tag then fails to move, it puts the moved ones back (or deletes those that
// were new) and says which, if any, it could not restore.
func tagAll(ctx context.Context, report *Report, jobs []*releaseJob, ropts []remote.Option) error {
	ropts = append([]remote.Option{remote.WithContext(ctx)}, ropts...)
	// One puller and one pusher for every call: each pings the registry
	// and authenticates once per repository, not once per tag.
	puller, err := remote.NewPuller(ropts...)
	if err != nil {
		return fmt.Errorf("%w; no tag was moved", err)
	}
	pusher, err := remote.NewPusher(ropts...)
	if err != nil {
		return fmt.Errorf("%w; no tag was moved", err)
	}
	getOpts := append(slices.Clone(ropts), remote.Reuse(puller))
	ropts = append(slices.Clone(ropts), remote.Reuse(pusher))
	moves, err := planTagMoves(report, jobs, getOpts)
	if err != nil {
		return fmt.Errorf("%w; no tag was moved", err)
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
		msg := fmt.Sprintf("put tag %s: %v; the %d tags moved were put back", moves[i].tag, errs[i], len(back))
		if len(left) > 0 {
			msg += "; could not restore " + strings.Join(left, ", ")
		}
		return errors.New(msg)
	}
	for i := range report.Releases {
		report.Releases[i].Tags = []string{}
	}
	for _, m := range moves {
		report.Releases[m.release].Tags = append(report.Releases[m.release].Tags, m.tag.String())
	}
	return nil
}

// planTagMoves finds every tag's move, many requests at a time: it asks
// where each tag points now (a HEAD), and fetches, for the tags that must
// move, what each will point at and what it pointed at before. A tag
// already on its release's digest (a rebuild that changed nothing) stays
// as it is. The moves are in plan and tag order.
func planTagMoves(report *Report, jobs []*releaseJob, ropts []remote.Option) ([]tagMove, error) {
	var moves []tagMove
	for i, j := range jobs {
		if report.Releases[i].Digest == "" {
			return nil, fmt.Errorf("release %s: the push returned no digest", j.release.Name)
		}
		for _, t := range j.release.Tags {
			tag, err := name.NewTag(t)
			if err != nil {
				return nil, fmt.Errorf("release %s: tag %q: %w", j.release.Name, t, err)
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
			m.same = head.Digest.String() == report.Releases[m.release].Digest
		case !isNotFound(err):
			errs[k] = fmt.Errorf("release %s: read tag %s before moving it: %w", jobs[m.release].release.Name, m.tag, err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return moves, fetchMoves(moves, existing, report, jobs, ropts)
}

// fetchMoves fetches, for the moves that are not already in place, the
// descriptor each tag will point at and the one it points at now.
func fetchMoves(moves []tagMove, existing []bool, report *Report, jobs []*releaseJob, ropts []remote.Option) error {
	descs := make([]*remote.Descriptor, len(jobs))
	for _, m := range moves {
		if !m.same {
			descs[m.release] = &remote.Descriptor{} // wanted
		}
	}
	errs := make([]error, len(jobs)+len(moves))
	forEach(len(jobs)+len(moves), func(k int) {
		if k < len(jobs) {
			if descs[k] == nil {
				return
			}
			j := jobs[k]
			ref, err := name.NewDigest(j.plan.Repository + "@" + report.Releases[k].Digest)
			if err == nil {
				descs[k], err = remote.Get(ref, ropts...)
			}
			if err != nil {
				errs[k] = fmt.Errorf("release %s: fetch %s@%s before tagging: %w", j.release.Name, j.plan.Repository, report.Releases[k].Digest, err)
			}
			return
		}
		i := k - len(jobs)
		if m := &moves[i]; !m.same && existing[i] {
			old, err := remote.Get(m.tag, ropts...)
			if err != nil {
				errs[k] = fmt.Errorf("release %s: read tag %s before moving it: %w", jobs[m.release].release.Name, m.tag, err)
			}
			m.old = old
		}
	})
	if err := errors.Join(errs...); err != nil {
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
