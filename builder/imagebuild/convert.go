package imagebuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerui"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/patternmatcher/ignorefile"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// convertRouters turns the router stage into LLB for every SM target inside
// jetbake, with BuildKit's own Dockerfile converter (dockerfile2llb, the code
// the dockerfile.v0 frontend runs): the Dockerfile is read once, there is no
// frontend call per SM target, and the converter's base image lookups are
// served by the build's resolve cache, so the build base is resolved once
// per build rather than once more per target. The states go straight into
// the runtime image's definition: one solve per release.
//
// The build context is the local folder, or the git source, that the
// frontend would use (dockerui's own git parsing; a git context has no
// .dockerignore, as with the frontend). It returns ok=false when the
// frontend must do it: a "# syntax=" line asks for another frontend.
func (j *releaseJob) convertRouters(ctx context.Context, c gateway.Client, buildBase string) (states []llb.State, ok bool, err error) {
	defer j.timings.record(PhaseFrontend, time.Now())
	dt, err := os.ReadFile(filepath.Join(j.dockerfileDir, j.dockerfile))
	if err != nil {
		return nil, false, fmt.Errorf("read the router's Dockerfile: %w", err)
	}
	if _, _, _, syntax := parser.DetectSyntax(dt); syntax {
		return nil, false, nil
	}
	bopts := c.BuildOpts()
	mainContext, err := j.mainContext(bopts.SessionID)
	if err != nil {
		return nil, true, err
	}
	buildPlatform := platforms.Normalize(platforms.DefaultSpec())
	if w := bopts.Workers; len(w) > 0 && len(w[0].Platforms) > 0 {
		buildPlatform = w[0].Platforms[0]
	}
	target := arm64Platform()
	caps := bopts.LLBCaps
	resolver := &cachedMetaResolver{c: c, cache: j.resolved}
	states = make([]llb.State, len(j.release.Targets))
	for i, t := range j.release.Targets {
		res, err := dockerfile2llb.Dockerfile2LLB(ctx, dt, dockerfile2llb.ConvertOpt{
			Config: dockerui.Config{
				BuildArgs:       j.routerArgs(t, buildBase),
				Target:          j.plan.Router.Target,
				TargetPlatforms: []ocispecs.Platform{target},
				BuildPlatforms:  []ocispecs.Platform{buildPlatform},
			},
			MainContext:    &mainContext,
			TargetPlatform: &target,
			MetaResolver:   resolver,
			LLBCaps:        &caps,
		})
		if err != nil {
			return nil, true, fmt.Errorf("compile %s for %s: %s: %w", j.plan.Router.Name, t.Arch, j.dockerfile, err)
		}
		states[i] = res.State
	}
	return states, true, nil
}

// mainContext is the router's build context as the frontend would make it.
func (j *releaseJob) mainContext(sessionID string) (llb.State, error) {
	if j.gitContext != "" {
		st, _, err := dockerui.DetectGitContext(j.gitContext, nil)
		if err != nil {
			return llb.State{}, fmt.Errorf("router context %s: %w", j.gitContext, err)
		}
		return *st, nil
	}
	excludes, err := j.dockerignore()
	if err != nil {
		return llb.State{}, err
	}
	return llb.Local(localContext, llb.SessionID(sessionID), llb.SharedKeyHint(localContext),
		llb.ExcludePatterns(excludes), dockerui.WithInternalName("load build context")), nil
}

// sessionCacheImports are the session's cache imports (--cache-from), read
// from its options as the Dockerfile frontend reads them.
func sessionCacheImports(c gateway.Client) ([]gateway.CacheOptionsEntry, error) {
	bc, err := dockerui.NewClient(c)
	if err != nil {
		return nil, fmt.Errorf("session options: %w", err)
	}
	return bc.CacheImports, nil
}

// dockerignore reads the exclude patterns the frontend would: the
// Dockerfile's own <name>.dockerignore, else the context's .dockerignore.
func (j *releaseJob) dockerignore() ([]string, error) {
	for _, p := range []string{filepath.Join(j.dockerfileDir, j.dockerfile+".dockerignore"), filepath.Join(j.contextDir, ".dockerignore")} {
		dt, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		excludes, err := ignorefile.ReadAll(bytes.NewReader(dt))
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", p, err)
		}
		return excludes, nil
	}
	return nil, nil
}

// cachedMetaResolver answers the Dockerfile converter's image lookups from
// the build's resolve cache, asking the daemon only for references no
// release has resolved yet.
type cachedMetaResolver struct {
	c     gateway.Client
	cache *resolveCache
}

// ResolveImageConfig implements llb.ImageMetaResolver.
func (r *cachedMetaResolver) ResolveImageConfig(ctx context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	dgst, config, err := r.cache.get(ctx, resolveKey(ref, opt), func() (string, []byte, error) {
		_, d, config, err := r.c.ResolveImageConfig(ctx, ref, opt)
		return d.String(), config, err
	})
	if err != nil {
		return "", "", nil, err
	}
	return ref, digest.Digest(dgst), config, nil
}

// resolveKey identifies a lookup: the reference, the platform and the mode.
func resolveKey(ref string, opt sourceresolver.Opt) string {
	key := ref
	if io := opt.ImageOpt; io != nil {
		if io.Platform != nil {
			key += "\x00" + platforms.Format(*io.Platform)
		}
		key += "\x00" + io.ResolveMode
	}
	return key
}
