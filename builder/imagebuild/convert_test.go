package imagebuild

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/moby/buildkit/client/llb/sourceresolver"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
)

// countingResolver is a gateway client that only resolves images, and counts.
type countingResolver struct {
	gateway.Client
	calls []string
}

func (c *countingResolver) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	c.calls = append(c.calls, ref)
	return ref, digest.FromString(ref), []byte(`{"architecture":"arm64"}`), nil
}

func TestCachedMetaResolver(t *testing.T) {
	c := &countingResolver{}
	r := &cachedMetaResolver{c: c, cache: newResolveCache()}
	arm64, amd64 := arm64Platform(), ocispecs.Platform{OS: "linux", Architecture: "amd64"}
	opt := func(p *ocispecs.Platform) sourceresolver.Opt {
		return sourceresolver.Opt{ImageOpt: &sourceresolver.ResolveImageOpt{Platform: p, ResolveMode: "default"}}
	}
	for range 3 {
		ref, dgst, cfg, err := r.ResolveImageConfig(t.Context(), "reg/base:1", opt(&arm64))
		require.NoError(t, err)
		require.Equal(t, "reg/base:1", ref)
		require.Equal(t, digest.FromString("reg/base:1"), dgst)
		require.JSONEq(t, `{"architecture":"arm64"}`, string(cfg))
	}
	_, _, _, err := r.ResolveImageConfig(t.Context(), "reg/base:1", opt(&amd64))
	require.NoError(t, err)
	require.Equal(t, []string{"reg/base:1", "reg/base:1"}, c.calls, "once per reference and platform")

	// What resolveBase found is served under the pinned reference the converter asks for.
	pinned := "reg/base:2@" + digest.FromString("x").String()
	r.cache.put(resolveKey(pinned, opt(&arm64)), digest.FromString("x").String(), []byte("{}"))
	_, dgst, _, err := r.ResolveImageConfig(t.Context(), pinned, opt(&arm64))
	require.NoError(t, err)
	require.Equal(t, digest.FromString("x"), dgst)
	require.Len(t, c.calls, 2, "no daemon call for a base resolved earlier in the build")
}

// A "# syntax=" line asks for another frontend: jetbake leaves it to the
// dockerfile.v0 frontend, which runs it.
func TestConvertRoutersFallsBackToTheFrontend(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("# syntax=docker/dockerfile:1\nFROM scratch AS router\n"), 0o644))
	tests := []struct {
		name string
		job  *releaseJob
	}{
		{"local context", &releaseJob{opts: &options{}, contextDir: dir, dockerfileDir: dir, dockerfile: "Dockerfile"}},
		{"git context", &releaseJob{opts: &options{}, gitContext: "https://example.com/r.git#v1", dockerfileDir: dir, dockerfile: "Dockerfile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			states, ok, err := tt.job.convertRouters(t.Context(), nil, "base")
			require.NoError(t, err)
			require.False(t, ok, "the frontend must convert it")
			require.Nil(t, states)
		})
	}
	missing := releaseJob{opts: &options{}, contextDir: dir, dockerfileDir: dir, dockerfile: "Nope"}
	_, _, err := missing.convertRouters(t.Context(), nil, "base")
	require.ErrorContains(t, err, "the router's Dockerfile "+filepath.Join(dir, "Nope")+" does not exist")
	// A pipe in its place is refused at once: reading it would block the build.
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "Pipe"), 0o644))
	piped := releaseJob{opts: &options{}, contextDir: dir, dockerfileDir: dir, dockerfile: "Pipe"}
	_, _, err = piped.convertRouters(t.Context(), nil, "base")
	require.ErrorContains(t, err, "is a named pipe (FIFO), not a regular file")
}
