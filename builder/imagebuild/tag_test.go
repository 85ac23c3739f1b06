package imagebuild

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/plan"
)

func TestFinishNeverTagsAfterAFailedOutput(t *testing.T) {
	dir := t.TempDir()
	report := &Report{Releases: []ReleaseReport{
		{Name: "ok", Outcome: Succeeded},
		{Name: "bad-output", Outcome: Succeeded, Outputs: []string{dir + "/missing" + localoutput.PartialSuffix}},
	}}
	b := &Builder{opts: options{push: true}}
	b.finish(t.Context(), nil, report, nil)
	require.Equal(t, Untagged, report.Releases[0].Outcome)
	require.Equal(t, Failed, report.Releases[1].Outcome, "a failure is never turned into 'not tagged'")
	require.Error(t, report.Err())
}

// tagAll lists in the report the tags tagging put on each release's digest.
func TestTagAllFillsTheReport(t *testing.T) {
	repo := testregistry.New(t) + "/jetbake/router"
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	ref, err := name.ParseReference(repo+":built", name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref, img))
	d, err := img.Digest()
	require.NoError(t, err)
	p := &plan.Plan{Repository: repo}
	jobs := []*releaseJob{{plan: p, release: plan.Release{Name: "r0", Tags: []string{repo + ":a", repo + ":b"}}}}
	report := &Report{Releases: []ReleaseReport{{Name: "r0", Outcome: Succeeded, Digest: d.String()}}}
	require.NoError(t, tagAll(t.Context(), report, jobs, nil))
	require.Equal(t, []string{repo + ":a", repo + ":b"}, report.Releases[0].Tags)
}
