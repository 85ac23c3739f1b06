package imagebuild

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/plan"
)

// solveOptBuilder is a Builder with a plan whose release folders exist,
// so that solveOpt can be called without a daemon.
func solveOptBuilder(t *testing.T, vars map[string]string, opts ...Option) (*Builder, []*releaseJob) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644))
	p := testPlan()
	p.Router.Dockerfile = filepath.Join(dir, "Dockerfile")
	b := New(nil, append([]Option{WithEntrypointDir(dir)}, opts...)...)
	b.opts.cache.LookupEnv = func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	jobs, err := b.selectJobs(p)
	require.NoError(t, err)
	return b, jobs
}

// What BuildKit gets for --cache-to type=gha inside a workflow: the url and
// token of the runner's environment and a scope per release; and with
// --sbom, the attestation's attributes.
func TestSolveOptCachesFromEnvironment(t *testing.T) {
	vars := map[string]string{"ACTIONS_CACHE_URL": "https://cache.example/", "ACTIONS_RUNTIME_TOKEN": "tok"}
	b, jobs := solveOptBuilder(t, vars,
		WithCache([]client.CacheOptionsEntry{{Type: "gha"}}, []client.CacheOptionsEntry{{Type: "gha", Attrs: map[string]string{"mode": "max", "scope": "main"}}}),
		WithControls(Controls{SBOM: "generator=127.0.0.1:5000/scanner:1"}))
	for _, j := range jobs {
		opt, _, err := b.solveOpt(j)
		require.NoError(t, err)
		require.Equal(t, []client.CacheOptionsEntry{{Type: "gha", Attrs: map[string]string{
			"url": "https://cache.example/", "token": "tok", "scope": j.release.Name}}}, opt.CacheImports)
		require.Equal(t, []client.CacheOptionsEntry{{Type: "gha", Attrs: map[string]string{
			"url": "https://cache.example/", "token": "tok", "mode": "max", "scope": "main-" + j.release.Name}}}, opt.CacheExports)
		require.Equal(t, "generator=127.0.0.1:5000/scanner:1", opt.FrontendAttrs["attest:sbom"])
	}
	require.Empty(t, b.opts.cache.Unusable(releasesOf(jobs)))

	// Outside a workflow the cache is left out, with a warning, as buildx leaves it out.
	b, jobs = solveOptBuilder(t, nil, WithCache(nil, []client.CacheOptionsEntry{{Type: "gha", Attrs: map[string]string{"scope": "main"}}}))
	opt, _, err := b.solveOpt(jobs[0])
	require.NoError(t, err)
	require.Empty(t, opt.CacheExports)
	require.Empty(t, opt.FrontendAttrs["attest:sbom"])
	require.Equal(t, []string{"the cache export type=gha,scope=main is left out: it needs a token and a url, from ACTIONS_RUNTIME_TOKEN and " +
		"ACTIONS_CACHE_URL or ACTIONS_RESULTS_URL inside a GitHub Actions workflow, or token= and url= in the flag"}, b.opts.cache.Unusable(releasesOf(jobs)))
}

// A release's own caches (--set RELEASE.cache-to=...) replace the build's
// for it alone; no-cache too.
func TestReleaseOwnCaches(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644))
	p := testPlan()
	p.Router.Dockerfile = filepath.Join(dir, "Dockerfile")
	yes := true
	p.Releases[1].CacheTo = []plan.Cache{{Type: "s3", Attrs: map[string]string{"bucket": "b", "region": "r"}}}
	p.Releases[1].NoCache = &yes
	b := New(nil, WithEntrypointDir(dir), WithCache(nil, []client.CacheOptionsEntry{{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/acme/cache"}}}))
	b.opts.cache.LookupEnv = func(string) (string, bool) { return "", false }
	jobs, err := b.selectJobs(p)
	require.NoError(t, err)
	first, _, err := b.solveOpt(jobs[0])
	require.NoError(t, err)
	require.Equal(t, []client.CacheOptionsEntry{{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/acme/cache:jetpack6.2"}}}, first.CacheExports)
	second, _, err := b.solveOpt(jobs[1])
	require.NoError(t, err)
	require.Equal(t, []client.CacheOptionsEntry{{Type: "s3", Attrs: map[string]string{"bucket": "b", "region": "r", "name": "jetpack7.2"}}}, second.CacheExports)
	require.False(t, jobs[0].noCache())
	require.True(t, jobs[1].noCache())
	require.Contains(t, jobs[1].routerOpts(jobs[1].release.Targets[0], "base"), "no-cache")

	require.False(t, b.opts.cache.Local(releasesOf(jobs)))
	p.Releases[0].CacheFrom = []plan.Cache{{Type: "local", Attrs: map[string]string{"src": "c"}}}
	jobs, err = b.selectJobs(p)
	require.NoError(t, err)
	require.True(t, b.opts.cache.Local(releasesOf(jobs)), "a local cache of --set needs the build's own session too")
}
