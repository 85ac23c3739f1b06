package cacheconfig

import (
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"
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

func TestReleaseNameAndScope(t *testing.T) {
	require.Equal(t, "jetpack6.2", releaseName("", "jetpack6.2"))
	require.Equal(t, "a-jetpack6.2;b-jetpack6.2", releaseName("a;b", "jetpack6.2"))
	require.Equal(t, "jetpack6.2", releaseScope("", "jetpack6.2"))
	require.Equal(t, "main-jetpack6.2", releaseScope("main", "jetpack6.2"))
}

func TestCacheRef(t *testing.T) {
	tests := []struct {
		ref  string
		want string
	}{
		{ref: "ghcr.io/jetbake/cache:buildcache", want: "ghcr.io/jetbake/cache:buildcache-jetpack6.2"},
		{ref: "ghcr.io/jetbake/cache", want: "ghcr.io/jetbake/cache:jetpack6.2"},
		{ref: "127.0.0.1:5000/jetbake/cache", want: "127.0.0.1:5000/jetbake/cache:jetpack6.2"},
		{ref: "127.0.0.1:5000/jetbake/cache:main", want: "127.0.0.1:5000/jetbake/cache:main-jetpack6.2"},
		{ref: "cache", want: "cache:jetpack6.2"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			require.Equal(t, tt.want, cacheRef(tt.ref, "jetpack6.2"))
		})
	}
}

func TestPerRelease(t *testing.T) {
	tests := []struct {
		name string
		in   client.CacheOptionsEntry
		want client.CacheOptionsEntry
	}{
		{
			name: "registry with tag",
			in:   client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/x/cache:bc", "mode": "max"}},
			want: client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/x/cache:bc-jetpack7.2", "mode": "max"}},
		},
		{
			name: "registry without tag",
			in:   client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": "127.0.0.1:5000/cache"}},
			// Reached over plain HTTP, as the image exporter is told.
			want: client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": "127.0.0.1:5000/cache:jetpack7.2", "registry.insecure": "true"}},
		},
		{
			name: "registry over HTTPS",
			in:   client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/acme/cache:main"}},
			want: client.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/acme/cache:main-jetpack7.2"}},
		},
		{
			name: "local import",
			in:   client.CacheOptionsEntry{Type: "local", Attrs: map[string]string{"src": "/cache"}},
			want: client.CacheOptionsEntry{Type: "local", Attrs: map[string]string{"src": "/cache/jetpack7.2"}},
		},
		{
			name: "local export",
			in:   client.CacheOptionsEntry{Type: "local", Attrs: map[string]string{"dest": "cache", "mode": "max"}},
			want: client.CacheOptionsEntry{Type: "local", Attrs: map[string]string{"dest": "cache/jetpack7.2", "mode": "max"}},
		},
		{
			name: "gha gets a scope",
			in:   client.CacheOptionsEntry{Type: "gha", Attrs: map[string]string{"url": "http://cache"}},
			want: client.CacheOptionsEntry{Type: "gha", Attrs: map[string]string{"url": "http://cache", "scope": "jetpack7.2"}},
		},
		{
			name: "gha scope given: one per release still",
			in:   client.CacheOptionsEntry{Type: "gha", Attrs: map[string]string{"scope": "main"}},
			want: client.CacheOptionsEntry{Type: "gha", Attrs: map[string]string{"scope": "main-jetpack7.2"}},
		},
		{
			name: "s3 gets a name",
			in:   client.CacheOptionsEntry{Type: "s3", Attrs: map[string]string{"bucket": "b", "region": "r"}},
			want: client.CacheOptionsEntry{Type: "s3", Attrs: map[string]string{"bucket": "b", "region": "r", "name": "jetpack7.2"}},
		},
		{
			name: "s3 names given: each per release",
			in:   client.CacheOptionsEntry{Type: "s3", Attrs: map[string]string{"name": "main;pr-1"}},
			want: client.CacheOptionsEntry{Type: "s3", Attrs: map[string]string{"name": "main-jetpack7.2;pr-1-jetpack7.2"}},
		},
		{
			name: "azblob gets a name",
			in:   client.CacheOptionsEntry{Type: "azblob", Attrs: map[string]string{"account_url": "https://a"}},
			want: client.CacheOptionsEntry{Type: "azblob", Attrs: map[string]string{"account_url": "https://a", "name": "jetpack7.2"}},
		},
		{
			name: "inline is the image's own",
			in:   client.CacheOptionsEntry{Type: "inline", Attrs: map[string]string{}},
			want: client.CacheOptionsEntry{Type: "inline", Attrs: map[string]string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string]string{}
			for k, v := range tt.in.Attrs {
				before[k] = v
			}
			got := perRelease([]client.CacheOptionsEntry{tt.in}, "jetpack7.2")
			require.Equal(t, []client.CacheOptionsEntry{tt.want}, got)
			require.Equal(t, before, tt.in.Attrs, "the shared entry is not changed")
		})
	}
	require.Empty(t, perRelease(nil, "jetpack7.2"))
}

// Two releases get distinct cache entries from the same flag.
func TestPerReleaseDistinct(t *testing.T) {
	entries := []client.CacheOptionsEntry{{Type: "registry", Attrs: map[string]string{"ref": "ghcr.io/x/cache"}}}
	a := perRelease(entries, "jetpack6.2")
	b := perRelease(entries, "jetpack7.2")
	require.NotEqual(t, a[0].Attrs["ref"], b[0].Attrs["ref"])
	require.Equal(t, "ghcr.io/x/cache", entries[0].Attrs["ref"])
}

func TestPerReleaseWithoutAttrs(t *testing.T) {
	got := perRelease([]client.CacheOptionsEntry{{Type: "gha"}}, "jetpack6.2")
	require.Equal(t, "jetpack6.2", got[0].Attrs["scope"])
}

func TestHasLocalCache(t *testing.T) {
	tests := []struct {
		entries []client.CacheOptionsEntry
		want    bool
	}{
		{entries: nil, want: false},
		{entries: []client.CacheOptionsEntry{{Type: "registry", Attrs: map[string]string{"ref": "127.0.0.1:5000/cache"}}}, want: false},
		{entries: []client.CacheOptionsEntry{{Type: "inline"}, {Type: "local", Attrs: map[string]string{"dest": "/tmp/cache"}}}, want: true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, hasLocalCache(tt.entries), "%+v", tt.entries)
	}
}
