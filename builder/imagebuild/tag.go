package imagebuild

import (
	"context"
	"fmt"
	"github.com/jetbake/jetbake/builder/refs"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// tagAll puts every release's tags on the digest it was pushed by. It first
// fetches every descriptor, so that a missing digest stops it before any tag
// moves; then it tags release by release.
func tagAll(ctx context.Context, report *Report, jobs []*releaseJob, ropts []remote.Option) error {
	ropts = append([]remote.Option{remote.WithContext(ctx)}, ropts...)
	descs := make([]*remote.Descriptor, len(jobs))
	for i, j := range jobs {
		rr := report.Releases[i]
		if rr.Digest == "" {
			return fmt.Errorf("release %s: the push returned no digest; no tag was put on", j.release.Name)
		}
		ref, err := name.NewDigest(j.plan.Repository+"@"+rr.Digest, nameOpts(j.plan.Repository)...)
		if err != nil {
			return fmt.Errorf("release %s: %w", j.release.Name, err)
		}
		if descs[i], err = remote.Get(ref, ropts...); err != nil {
			return fmt.Errorf("release %s: fetch %s before tagging: %w", j.release.Name, ref, err)
		}
	}
	for i, j := range jobs {
		var tagged []string
		for _, t := range j.release.Tags {
			tag, err := name.NewTag(t, nameOpts(t)...)
			if err != nil {
				return fmt.Errorf("release %s: tag %q: %w", j.release.Name, t, err)
			}
			if err := remote.Tag(tag, descs[i], ropts...); err != nil {
				return fmt.Errorf("release %s: put tag %s: %w (tags put so far: %s)", j.release.Name, t, err, strings.Join(tagged, ", "))
			}
			tagged = append(tagged, t)
		}
		report.Releases[i].Tags = tagged
	}
	return nil
}

// nameOpts allows plain HTTP for registries on this machine.
func nameOpts(ref string) []name.Option {
	if refs.IsLoopback(ref) {
		return []name.Option{name.Insecure}
	}
	return nil
}
