package imagebuild

import (
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"
)

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

func TestOutputPath(t *testing.T) {
	tests := []struct {
		name  string
		out   Output
		multi bool
		want  string
	}{
		{name: "oci single", out: Output{Type: "oci", Dest: "out"}, want: "out"},
		{name: "docker single", out: Output{Type: "docker", Dest: "out/tei.tar"}, want: "out/tei.tar"},
		{name: "oci multi", out: Output{Type: "oci", Dest: "out"}, multi: true, want: "out/jetpack6.2"},
		{name: "docker multi", out: Output{Type: "docker", Dest: "out/tei.tar"}, multi: true, want: "out/tei-jetpack6.2.tar"},
		{name: "docker multi without extension", out: Output{Type: "docker", Dest: "out/tei"}, multi: true, want: "out/tei-jetpack6.2.tar"},
		{name: "docker multi dotted folder", out: Output{Type: "docker", Dest: "v1.2/tei"}, multi: true, want: "v1.2/tei-jetpack6.2.tar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, outputPath(tt.out, "jetpack6.2", tt.multi))
		})
	}
}

func TestPerReleaseWithoutAttrs(t *testing.T) {
	got := perRelease([]client.CacheOptionsEntry{{Type: "gha"}}, "jetpack6.2")
	require.Equal(t, "jetpack6.2", got[0].Attrs["scope"])
}
