package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// tagMove is one tag to put on a built digest, and what it pointed at before.
type tagMove struct {
	release int
	tag     name.Tag
	desc    *remote.Descriptor
	old     *remote.Descriptor // nil when the tag is new
}

// tagAll puts every release's tags on the digest it was pushed by, as one
// unit as far as a registry allows: it first fetches every built descriptor
// and every tag's current target, so that nothing moves unless all can; if a
// tag then fails to move, it puts the moved ones back (or deletes those that
// were new) and says which, if any, it could not restore.
func tagAll(ctx context.Context, report *Report, jobs []*releaseJob, ropts []remote.Option) error {
	ropts = append([]remote.Option{remote.WithContext(ctx)}, ropts...)
	moves, err := planTagMoves(report, jobs, ropts)
	if err != nil {
		return fmt.Errorf("%w; no tag was moved", err)
	}
	for i, m := range moves {
		if err := remote.Tag(m.tag, m.desc, ropts...); err != nil {
			left := rollback(moves[:i], ropts)
			msg := fmt.Sprintf("put tag %s: %v; the %d tags moved before it were put back", m.tag, err, i)
			if len(left) > 0 {
				msg += "; could not restore " + strings.Join(left, ", ")
			}
			return errors.New(msg)
		}
	}
	for i := range report.Releases {
		report.Releases[i].Tags = []string{}
	}
	for _, m := range moves {
		report.Releases[m.release].Tags = append(report.Releases[m.release].Tags, m.tag.String())
	}
	return nil
}

// planTagMoves fetches what every tag will point at, and what it points at now.
func planTagMoves(report *Report, jobs []*releaseJob, ropts []remote.Option) ([]tagMove, error) {
	var moves []tagMove
	for i, j := range jobs {
		rr := report.Releases[i]
		if rr.Digest == "" {
			return nil, fmt.Errorf("release %s: the push returned no digest", j.release.Name)
		}
		ref, err := name.NewDigest(j.plan.Repository + "@" + rr.Digest)
		if err != nil {
			return nil, fmt.Errorf("release %s: %w", j.release.Name, err)
		}
		desc, err := remote.Get(ref, ropts...)
		if err != nil {
			return nil, fmt.Errorf("release %s: fetch %s before tagging: %w", j.release.Name, ref, err)
		}
		for _, t := range j.release.Tags {
			tag, err := name.NewTag(t)
			if err != nil {
				return nil, fmt.Errorf("release %s: tag %q: %w", j.release.Name, t, err)
			}
			old, err := remote.Get(tag, ropts...)
			if err != nil && !isNotFound(err) {
				return nil, fmt.Errorf("release %s: read tag %s before moving it: %w", j.release.Name, t, err)
			}
			moves = append(moves, tagMove{release: i, tag: tag, desc: desc, old: old})
		}
	}
	return moves, nil
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
