// Package resolvecache resolves each base reference once per build, for
// every release and for BuildKit's Dockerfile converter: concurrent askers
// wait for the one resolve in flight, and a failed resolve is not kept.
package resolvecache

import (
	"context"
	"sync"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	digest "github.com/opencontainers/go-digest"
)

// Cache resolves each base reference once per build, however many
// releases use it, and lets concurrent askers wait for the one resolve in
// flight. A failed resolve is not kept: the next asker tries again.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*resolveEntry
}

type resolveEntry struct {
	done   chan struct{}
	digest string
	config []byte
	err    error
}

// New returns an empty cache.
func New() *Cache { return &Cache{entries: map[string]*resolveEntry{}} }

// Put records what a resolve of key found, unless key is known already.
func (rc *Cache) Put(key, digest string, config []byte) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, ok := rc.entries[key]; ok {
		return
	}
	e := &resolveEntry{done: make(chan struct{}), digest: digest, config: config}
	close(e.done)
	rc.entries[key] = e
}

// Get returns ref's digest and config, calling resolve when no earlier or
// concurrent call has them.
func (rc *Cache) Get(ctx context.Context, ref string, resolve func() (string, []byte, error)) (string, []byte, error) {
	if rc == nil {
		return resolve()
	}
	for {
		rc.mu.Lock()
		e, ok := rc.entries[ref]
		if !ok {
			e = &resolveEntry{done: make(chan struct{})}
			rc.entries[ref] = e
			rc.mu.Unlock()
			e.digest, e.config, e.err = resolve()
			if e.err != nil {
				rc.mu.Lock()
				delete(rc.entries, ref)
				rc.mu.Unlock()
			}
			close(e.done)
			return e.digest, e.config, e.err
		}
		rc.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return "", nil, ctx.Err()
		}
		if e.err == nil {
			return e.digest, e.config, nil
		}
	}
}

// MetaResolver answers the Dockerfile converter's image lookups from
// the build's Cache through C, asking the daemon only for references no
// release has resolved yet.
type MetaResolver struct {
	C     gateway.Client
	Cache *Cache
}

// ResolveImageConfig implements llb.ImageMetaResolver.
func (r *MetaResolver) ResolveImageConfig(ctx context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	dgst, config, err := r.Cache.Get(ctx, Key(ref, opt), func() (string, []byte, error) {
		_, d, config, err := r.C.ResolveImageConfig(ctx, ref, opt)
		return d.String(), config, err
	})
	if err != nil {
		return "", "", nil, err
	}
	return ref, digest.Digest(dgst), config, nil
}

// Key identifies a lookup: the reference, the platform and the mode.
func Key(ref string, opt sourceresolver.Opt) string {
	key := ref
	if io := opt.ImageOpt; io != nil {
		if io.Platform != nil {
			key += "\x00" + platforms.Format(*io.Platform)
		}
		key += "\x00" + io.ResolveMode
	}
	return key
}
