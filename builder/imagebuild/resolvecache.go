package imagebuild

import (
	"context"
	"sync"
)

// resolveCache resolves each base reference once per build, however many
// releases use it, and lets concurrent askers wait for the one resolve in
// flight. A failed resolve is not kept: the next asker tries again.
type resolveCache struct {
	mu      sync.Mutex
	entries map[string]*resolveEntry
}

type resolveEntry struct {
	done   chan struct{}
	digest string
	config []byte
	err    error
}

func newResolveCache() *resolveCache { return &resolveCache{entries: map[string]*resolveEntry{}} }

// put records what a resolve of key found, unless key is known already.
func (rc *resolveCache) put(key, digest string, config []byte) {
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

// get returns ref's digest and config, calling resolve when no earlier or
// concurrent call has them.
func (rc *resolveCache) get(ctx context.Context, ref string, resolve func() (string, []byte, error)) (string, []byte, error) {
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
