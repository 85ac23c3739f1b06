package resolvecache

import (
	"context"
	"errors"
	"testing"

	"github.com/moby/buildkit/client/llb/sourceresolver"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
)

var errTest = errors.New("registry down")

func TestResolveCache(t *testing.T) {
	rc := New()
	calls := 0
	resolve := func() (string, []byte, error) { calls++; return "sha256:1", []byte("{}"), nil }
	for range 3 {
		d, cfg, err := rc.Get(t.Context(), "ref", resolve)
		require.NoError(t, err)
		require.Equal(t, "sha256:1", d)
		require.Equal(t, []byte("{}"), cfg)
	}
	require.Equal(t, 1, calls, "one resolve per reference per build")
	_, _, err := rc.Get(t.Context(), "bad", func() (string, []byte, error) { return "", nil, errTest })
	require.ErrorIs(t, err, errTest)
	d, _, err := rc.Get(t.Context(), "bad", resolve)
	require.NoError(t, err, "a failed resolve is tried again")
	require.Equal(t, "sha256:1", d)
}

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
	r := &MetaResolver{C: c, Cache: New()}
	arm64, amd64 := ocispecs.Platform{OS: "linux", Architecture: "arm64"}, ocispecs.Platform{OS: "linux", Architecture: "amd64"}
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
	r.Cache.Put(Key(pinned, opt(&arm64)), digest.FromString("x").String(), []byte("{}"))
	_, dgst, _, err := r.ResolveImageConfig(t.Context(), pinned, opt(&arm64))
	require.NoError(t, err)
	require.Equal(t, digest.FromString("x"), dgst)
	require.Len(t, c.calls, 2, "no daemon call for a base resolved earlier in the build")
}
