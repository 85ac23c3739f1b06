package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moby/buildkit/client"

	"github.com/jetbake/jetbake/builder/imagebuild"
)

// coldStart makes the next build of c cold: it clears what c keeps
// between builds outside BuildKit (jetbake's verdict store), then prunes
// the daemon's cache. Without the first, jetbake's cold build would skip
// the smoke runs and audits that its previous round remembered, which bake
// never has.
func coldStart(ctx context.Context, c *client.Client, tool *contender) error {
	if tool.clearCache != nil {
		if err := tool.clearCache(); err != nil {
			return fmt.Errorf("%s: %w", tool.name, err)
		}
	}
	return prune(ctx, c)
}

// verdictsDir is jetbake's verdict store under a cache folder, where
// imagebuild.DefaultVerdictDir is when XDG_CACHE_HOME is cacheHome: the smoke runs'
// and audits' verdicts a warm build reuses (issue 42).
func verdictsDir(cacheHome string) string { return filepath.Join(cacheHome, "jetbake", "verdicts") }

// clearVerdicts empties jetbake's verdict store under cacheHome, the
// bench's own cache folder for jetbake, and says so when it cannot.
func clearVerdicts(cacheHome string) error {
	if cacheHome == "" {
		return errors.New("no cache folder for jetbake: the verdict store cannot be cleared")
	}
	return imagebuild.ClearVerdicts(verdictsDir(cacheHome))
}

// prune empties the daemon's build cache, as `buildctl prune --all`, and
// lets the disk settle: what the previous build and the prune wrote is
// flushed before the next build's clock starts.
func prune(ctx context.Context, c *client.Client) error {
	if err := c.Prune(ctx, nil, client.PruneAll); err != nil {
		return fmt.Errorf("prune buildkitd's cache: %w", err)
	}
	syscall.Sync()
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return ctx.Err()
	}
	du, err := c.DiskUsage(ctx)
	if err != nil {
		return fmt.Errorf("buildkitd disk usage: %w", err)
	}
	if len(du) > 0 {
		return fmt.Errorf("prune left %d cache records: the cold build would not be cold", len(du))
	}
	return nil
}
