package imagebuild

import (
	"net/http"
	"strings"
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

// builtRelease pushes an image to repo by digest (as build --push leaves a
// release before tagging) and returns the job of release r0, to be tagged
// repo:a and repo:b, and a report of it built.
func builtRelease(t *testing.T, repo string) ([]*releaseJob, *Report) {
	t.Helper()
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	ref, err := name.ParseReference(repo+":built", name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref, img))
	d, err := img.Digest()
	require.NoError(t, err)
	p := &plan.Plan{Repository: repo}
	jobs := []*releaseJob{{plan: p, release: plan.Release{Name: "r0", Tags: []string{repo + ":a", repo + ":b"}}}}
	return jobs, &Report{Releases: []ReleaseReport{{Name: "r0", Outcome: Succeeded, Digest: d.String()}}}
}

// tagAll lists in the report the tags tagging put on each release's digest.
func TestTagAllFillsTheReport(t *testing.T) {
	repo := testregistry.New(t) + "/jetbake/router"
	jobs, report := builtRelease(t, repo)
	require.NoError(t, tagAll(t.Context(), report, jobs, nil))
	require.Equal(t, []string{repo + ":a", repo + ":b"}, report.Releases[0].Tags)
}

// A tag call that fails after build --push: the build's error is one
// sentence, the registry's fault in its words and the rollback, and no
// release is reported tagged.
func TestFinishTagFailureIsOneSentence(t *testing.T) {
	repo := testregistry.New(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/b") {
				http.Error(w, "<html>quota exceeded</html>", http.StatusForbidden)
				return
			}
			reg.ServeHTTP(w, r)
		})
	}) + "/jetbake/router"
	jobs, report := builtRelease(t, repo)
	b := &Builder{opts: options{push: true}}
	b.finish(t.Context(), jobs, report, nil)
	require.Equal(t, Untagged, report.Releases[0].Outcome)
	require.Empty(t, report.Releases[0].Tags)
	err := report.Err()
	require.Error(t, err)
	require.NotContains(t, err.Error(), "\n")
	require.NotContains(t, err.Error(), "quota exceeded")
	require.Contains(t, err.Error(), "every release was built and pushed by digest, but tagging failed: cannot put tag "+repo+
		":b of release r0: the registry answered 403 Forbidden to PUT http://")
	require.True(t, strings.HasSuffix(err.Error(), "or check that your account may push to the repository; the 1 tag moved was put back"), err.Error())
	_, err = remote.Head(mustParse(t, repo+":a"))
	require.Error(t, err, "the tag that moved is gone again")
}

func mustParse(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s, name.Insecure)
	require.NoError(t, err)
	return r
}
