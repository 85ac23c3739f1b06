package imagebuild

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/plan"
)

// failingRegistry is an in-memory registry that refuses to store a manifest
// under the tag failTag.
func failingRegistry(t *testing.T, failTag string) string {
	t.Helper()
	return testregistry.New(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/"+failTag) {
				http.Error(w, "quota exceeded", http.StatusForbidden)
				return
			}
			reg.ServeHTTP(w, r)
		})
	})
}

func pushRandom(t *testing.T, ref string) v1.Hash {
	t.Helper()
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	r, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(r, img))
	d, err := img.Digest()
	require.NoError(t, err)
	return d
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s, name.Insecure)
	require.NoError(t, err)
	return r
}

func tagJobs(repo string, tags ...[]string) ([]*releaseJob, *Report) {
	p := &plan.Plan{Repository: repo}
	report := &Report{}
	var jobs []*releaseJob
	for i, ts := range tags {
		rel := plan.Release{Name: "r" + string(rune('0'+i)), Tags: ts}
		jobs = append(jobs, &releaseJob{plan: p, release: rel})
		report.Releases = append(report.Releases, ReleaseReport{Name: rel.Name, Outcome: Succeeded})
	}
	return jobs, report
}

func TestTagAllPutsEveryTagOn(t *testing.T) {
	repo := failingRegistry(t, "never") + "/jetbake/router"
	jobs, report := tagJobs(repo, []string{repo + ":a", repo + ":b"}, []string{repo + ":c"})
	report.Releases[0].Digest = pushRandom(t, repo+":built-0").String()
	report.Releases[1].Digest = pushRandom(t, repo+":built-1").String()
	require.NoError(t, tagAll(t.Context(), report, jobs, nil))
	require.Equal(t, []string{repo + ":a", repo + ":b"}, report.Releases[0].Tags)
	desc, err := remote.Head(mustRef(t, repo+":c"))
	require.NoError(t, err)
	require.Equal(t, report.Releases[1].Digest, desc.Digest.String())
}

// A tag already on its release's digest (a rebuild that changed nothing)
// is not written again; the others are, and the report lists them all.
func TestTagAllLeavesTagsInPlace(t *testing.T) {
	var mu sync.Mutex
	var puts []string
	repo := testregistry.New(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
				mu.Lock()
				puts = append(puts, r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
				mu.Unlock()
			}
			reg.ServeHTTP(w, r)
		})
	}) + "/jetbake/router"
	built := pushRandom(t, repo+":in-place")
	moved := pushRandom(t, repo+":moved")
	jobs, report := tagJobs(repo, []string{repo + ":in-place", repo + ":moved", repo + ":new"})
	report.Releases[0].Digest = built.String()
	puts = nil
	require.NoError(t, tagAll(t.Context(), report, jobs, nil))
	require.ElementsMatch(t, []string{"moved", "new"}, puts, "only the tags that move are written")
	require.Equal(t, []string{repo + ":in-place", repo + ":moved", repo + ":new"}, report.Releases[0].Tags)
	for _, tag := range []string{"in-place", "moved", "new"} {
		desc, err := remote.Head(mustRef(t, repo+":"+tag))
		require.NoError(t, err)
		require.Equal(t, built, desc.Digest, tag)
	}
	require.NotEqual(t, moved, built)
}

// A tag that fails to move puts back every tag moved before it.
func TestTagAllRollsBack(t *testing.T) {
	repo := failingRegistry(t, "fail-me") + "/jetbake/router"
	before := pushRandom(t, repo+":existing")
	jobs, report := tagJobs(repo, []string{repo + ":new", repo + ":existing"}, []string{repo + ":fail-me"})
	report.Releases[0].Digest = pushRandom(t, repo+":built-0").String()
	report.Releases[1].Digest = pushRandom(t, repo+":built-1").String()

	err := tagAll(t.Context(), report, jobs, nil)
	require.ErrorContains(t, err, "put tag "+repo+":fail-me")
	require.ErrorContains(t, err, "the 2 tags moved were put back")
	desc, err := remote.Head(mustRef(t, repo+":existing"))
	require.NoError(t, err)
	require.Equal(t, before, desc.Digest, "the existing tag points where it did")
	_, err = remote.Head(mustRef(t, repo+":new"))
	require.Error(t, err, "the new tag is gone again")
	require.Empty(t, report.Releases[0].Tags)
}

func TestTagAllNeedsEveryDigest(t *testing.T) {
	repo := failingRegistry(t, "never") + "/jetbake/router"
	jobs, report := tagJobs(repo, []string{repo + ":a"})
	require.ErrorContains(t, tagAll(t.Context(), report, jobs, nil), "no digest")
}

func TestFinishNeverTagsAfterAFailedOutput(t *testing.T) {
	dir := t.TempDir()
	report := &Report{Releases: []ReleaseReport{
		{Name: "ok", Outcome: Succeeded},
		{Name: "bad-output", Outcome: Succeeded, Outputs: []string{dir + "/missing" + tmpSuffix}},
	}}
	b := &Builder{opts: options{push: true}}
	b.finish(t.Context(), nil, report, nil)
	require.Equal(t, Untagged, report.Releases[0].Outcome)
	require.Equal(t, Failed, report.Releases[1].Outcome, "a failure is never turned into 'not tagged'")
	require.Error(t, report.Err())
}

// noDigestHeader drops Docker-Content-Digest from HEAD answers, as some
// registries do.
type noDigestHeader struct{ http.ResponseWriter }

func (w noDigestHeader) WriteHeader(code int) {
	w.Header().Del("Docker-Content-Digest")
	w.ResponseWriter.WriteHeader(code)
}

// A registry whose HEAD answers lack the digest is asked with GET.
func TestTagAllWithoutDigestOnHead(t *testing.T) {
	repo := testregistry.New(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/manifests/") {
				w = noDigestHeader{w}
			}
			reg.ServeHTTP(w, r)
		})
	}) + "/jetbake/router"
	built := pushRandom(t, repo+":in-place")
	jobs, report := tagJobs(repo, []string{repo + ":in-place", repo + ":new"})
	report.Releases[0].Digest = built.String()
	require.NoError(t, tagAll(t.Context(), report, jobs, nil))
	require.Equal(t, []string{repo + ":in-place", repo + ":new"}, report.Releases[0].Tags)
	desc, err := remote.Get(mustRef(t, repo+":new"))
	require.NoError(t, err)
	require.Equal(t, built, desc.Digest)
}
