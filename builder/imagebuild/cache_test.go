package imagebuild

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/plan"
)

// env is a fake environment for fromEnvironment.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// The GitHub Actions and S3 caches are completed from the runner's
// environment as buildx completes them (build/opt.go, CreateCaches).
func TestFromEnvironment(t *testing.T) {
	tests := []struct {
		name string
		in   client.CacheOptionsEntry
		env  map[string]string
		want map[string]string
	}{
		{
			name: "gha v1: url from ACTIONS_CACHE_URL",
			in:   client.CacheOptionsEntry{Type: "gha", Attrs: map[string]string{"mode": "max"}},
			env:  map[string]string{"ACTIONS_CACHE_URL": "https://cache.example/", "ACTIONS_RESULTS_URL": "https://results.example/", "ACTIONS_RUNTIME_TOKEN": "tok"},
			want: map[string]string{"mode": "max", "url": "https://cache.example/", "token": "tok"},
		},
		{
			name: "gha v2: url_v2 from ACTIONS_RESULTS_URL, url too",
			in:   client.CacheOptionsEntry{Type: "gha"},
			env:  map[string]string{"ACTIONS_CACHE_SERVICE_V2": "True", "ACTIONS_RESULTS_URL": "https://results.example/", "ACTIONS_RUNTIME_TOKEN": "tok"},
			want: map[string]string{"url_v2": "https://results.example/", "url": "https://results.example/", "token": "tok"},
		},
		{
			name: "gha: version=1 keeps v1 though the service is v2",
			in:   client.CacheOptionsEntry{Type: "gha", Attrs: map[string]string{"version": "1"}},
			env:  map[string]string{"ACTIONS_CACHE_SERVICE_V2": "true", "ACTIONS_RESULTS_URL": "https://results.example/", "ACTIONS_RUNTIME_TOKEN": "tok"},
			want: map[string]string{"version": "1", "url": "https://results.example/", "token": "tok"},
		},
		{
			name: "gha: what the flag gives wins",
			in:   client.CacheOptionsEntry{Type: "gha", Attrs: map[string]string{"url": "https://mine/", "token": "mine"}},
			env:  map[string]string{"ACTIONS_CACHE_URL": "https://cache.example/", "ACTIONS_RUNTIME_TOKEN": "tok"},
			want: map[string]string{"url": "https://mine/", "token": "mine"},
		},
		{
			name: "gha outside a workflow: nothing to fill",
			in:   client.CacheOptionsEntry{Type: "gha"},
			want: map[string]string{},
		},
		{
			name: "s3 keys from the AWS variables",
			in:   client.CacheOptionsEntry{Type: "s3", Attrs: map[string]string{"bucket": "b"}},
			env:  map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "key", "AWS_SESSION_TOKEN": "st"},
			want: map[string]string{"bucket": "b", "access_key_id": "id", "secret_access_key": "key", "session_token": "st"},
		},
		{
			name: "s3 keys given: no session token of the environment's",
			in:   client.CacheOptionsEntry{Type: "s3", Attrs: map[string]string{"access_key_id": "a", "secret_access_key": "b"}},
			env:  map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "key", "AWS_SESSION_TOKEN": "st"},
			want: map[string]string{"access_key_id": "a", "secret_access_key": "b"},
		},
		{
			name: "registry: untouched",
			in:   client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": "r"}},
			env:  map[string]string{"ACTIONS_RUNTIME_TOKEN": "tok", "AWS_ACCESS_KEY_ID": "id"},
			want: map[string]string{"ref": "r"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromEnvironment(tt.in, env(tt.env))
			require.Equal(t, tt.in.Type, got.Type)
			require.Equal(t, tt.want, got.Attrs)
		})
	}
}

// solveOptBuilder is a Builder with a plan whose release folders exist,
// so that solveOpt can be called without a daemon.
func solveOptBuilder(t *testing.T, vars map[string]string, opts ...Option) (*Builder, []*releaseJob) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644))
	p := testPlan()
	p.Router.Dockerfile = filepath.Join(dir, "Dockerfile")
	b := New(nil, append([]Option{WithEntrypointDir(dir)}, opts...)...)
	b.opts.lookupEnv = env(vars)
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
	require.Empty(t, b.unusableCaches(jobs))

	// Outside a workflow the cache is left out, with a warning, as buildx leaves it out.
	b, jobs = solveOptBuilder(t, nil, WithCache(nil, []client.CacheOptionsEntry{{Type: "gha", Attrs: map[string]string{"scope": "main"}}}))
	opt, _, err := b.solveOpt(jobs[0])
	require.NoError(t, err)
	require.Empty(t, opt.CacheExports)
	require.Empty(t, opt.FrontendAttrs["attest:sbom"])
	require.Equal(t, []string{"the cache export type=gha,scope=main is left out: it needs a token and a url, from ACTIONS_RUNTIME_TOKEN and " +
		"ACTIONS_CACHE_URL or ACTIONS_RESULTS_URL inside a GitHub Actions workflow, or token= and url= in the flag"}, b.unusableCaches(jobs))
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
	b.opts.lookupEnv = env(nil)
	jobs, err := b.selectJobs(p)
	require.NoError(t, err)
	first, _, err := b.solveOpt(jobs[0])
	require.NoError(t, err)
	require.Equal(t, []client.CacheOptionsEntry{{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/acme/cache:jetpack6.2"}}}, first.CacheExports)
	second, _, err := b.solveOpt(jobs[1])
	require.NoError(t, err)
	require.Equal(t, []client.CacheOptionsEntry{{Type: "s3", Attrs: map[string]string{"bucket": "b", "region": "r", "name": "jetpack7.2"}}}, second.CacheExports)
	require.False(t, jobs[0].controls.NoCache)
	require.True(t, jobs[1].controls.NoCache)
	require.Contains(t, jobs[1].routerOpts(jobs[1].release.Targets[0], "base"), "no-cache")

	require.False(t, hasLocalCaches(jobs))
	p.Releases[0].CacheFrom = []plan.Cache{{Type: "local", Attrs: map[string]string{"src": "c"}}}
	jobs, err = b.selectJobs(p)
	require.NoError(t, err)
	require.True(t, hasLocalCaches(jobs), "a local cache of --set needs the build's own session too")
}

func TestReleaseNameAndScope(t *testing.T) {
	require.Equal(t, "jetpack6.2", releaseName("", "jetpack6.2"))
	require.Equal(t, "a-jetpack6.2;b-jetpack6.2", releaseName("a;b", "jetpack6.2"))
	require.Equal(t, "jetpack6.2", releaseScope("", "jetpack6.2"))
	require.Equal(t, "main-jetpack6.2", releaseScope("main", "jetpack6.2"))
}
