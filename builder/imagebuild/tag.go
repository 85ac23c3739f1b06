package imagebuild

import (
	"context"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/imagebuild/tagging"
)

// tagAll puts every release's tags on the digest it was pushed by
// (tagging.All) and lists them in the report.
func tagAll(ctx context.Context, report *Report, jobs []*releaseJob, ropts []remote.Option) error {
	releases := make([]tagging.Release, len(jobs))
	for i, j := range jobs {
		releases[i] = tagging.Release{Name: j.release.Name, Repository: j.plan.Repository, Digest: report.Releases[i].Digest, Tags: j.release.Tags}
	}
	tags, err := tagging.All(ctx, releases, ropts)
	if err != nil {
		return err
	}
	for i := range report.Releases {
		report.Releases[i].Tags = []string{}
		if i < len(tags) {
			report.Releases[i].Tags = tags[i]
		}
	}
	return nil
}
