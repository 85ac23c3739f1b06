package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/jetbake/jetbake/builder/imagepick"
)

// Tag is the tag a release is resolved by: the first the matrix gives it.
type Tag struct {
	// Release is the matrix release, Repository the image repository and
	// Tag the tag alone ("1.9.3-jetpack6.2").
	Release, Repository, Tag string
}

// ReleasesFromRegistry resolves each release's tag with pick's registry
// code (imagepick.Resolve: its keychain, mirrors and transport) and pins
// the release by the digest the tag names now. A release whose tag is not in
// the registry is left out, with a sentence in left; a tag that names an
// image of another release, or a registry that cannot answer, is an error.
func ReleasesFromRegistry(ctx context.Context, tags []Tag, opts ...imagepick.Option) (out []Release, left []string, err error) {
	for _, t := range tags {
		res, err := imagepick.Resolve(ctx, t.Repository, t.Tag, opts...)
		if errors.Is(err, imagepick.ErrTagNotFound) {
			left = append(left, fmt.Sprintf("release %s left out: %v", t.Release, err))
			continue
		}
		if err != nil {
			return nil, nil, err // it names the repository and the tag, and stays the registry's one sentence
		}
		if res.Meta.Release != t.Release {
			return nil, nil, fmt.Errorf("release %s: %s:%s names an image of release %q (%s): push the release's build again ('jetbake build --push'), or give --metadata-file",
				t.Release, t.Repository, t.Tag, res.Meta.Release, res.Digest)
		}
		out = append(out, Release{Name: t.Release, Image: t.Repository + "@" + res.Digest, Meta: res.Meta})
	}
	if len(out) == 0 {
		return nil, left, fmt.Errorf("no release of the matrix is in the registry (%d tags looked up): push them with 'jetbake build --push', or give --metadata-file", len(tags))
	}
	return out, left, nil
}
