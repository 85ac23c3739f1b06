package e2e

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/jetbake/jetbake/builder/internal/gitserver"
)

// RouterSource is the router's source as users give it, on a git server on
// 127.0.0.1: the stand-in router's folder of the checkout committed into
// repositories the way a router's own repository holds it.
type RouterSource struct {
	// Server serves the repositories over git:// and http://.
	Server *gitserver.Server
	// Router is router.git: the router at its root.
	Router *gitserver.Repo
	// Tag is the commit of router.git's annotated tag v1.8.0; TagObject is
	// the tag object itself.
	Tag, TagObject string
	// Inner is a commit of router.git's main after the tag that no ref
	// names (main has one more on top).
	Inner string
	// Branch is the commit of router.git's branch release-1.8, one commit
	// on top of the tag.
	Branch string
	// Monorepo is embedder.git: a README at the root, the router under
	// services/router; MonorepoTag is its annotated tag v1.8.0's commit.
	Monorepo    *gitserver.Repo
	MonorepoTag string
	// Private is private/router.git, which needs PrivateToken over HTTP;
	// PrivateTag is its annotated tag v1.8.0's commit.
	Private      *gitserver.Repo
	PrivateToken string
	PrivateTag   string
}

// Repository paths on the server and the ref names of RouterSource.
const (
	RouterRepo   = "router.git"
	MonorepoRepo = "embedder.git"
	PrivateRepo  = "private/router.git"
	RouterTag    = "v1.8.0"
	RouterBranch = "release-1.8"
	MonorepoDir  = "services/router"
)

// ServeRouterSource starts a git server with state under dir and commits
// the stand-in router of the checkout at repoRoot into its repositories,
// as they are when this runs: the commits after the tag change no file,
// so that every form builds the same tree and BuildKit's cache serves the
// steps after the checkout. Close the server when done.
func ServeRouterSource(ctx context.Context, repoRoot, dir, privateToken string) (*RouterSource, error) {
	srv, err := gitserver.Start(filepath.Join(dir, "repositories"))
	if err != nil {
		return nil, err
	}
	rs := &RouterSource{Server: srv, PrivateToken: privateToken}
	if err := rs.fill(ctx, filepath.Join(repoRoot, TEISource)); err != nil {
		_ = rs.Close()
		return nil, err
	}
	srv.Private(PrivateRepo, privateToken)
	return rs, nil
}

// fill makes the repositories from the router's folder src.
func (rs *RouterSource) fill(ctx context.Context, src string) error {
	var err error
	step := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	commit := func(repo **gitserver.Repo, out *string, branch, message, dir, from string, files map[string]string) func() error {
		return func() (e error) {
			*out, e = (*repo).Commit(ctx, branch, message, dir, from, files)
			return e
		}
	}
	create := func(repo **gitserver.Repo, path string) func() error {
		return func() (e error) {
			*repo, e = rs.Server.Create(ctx, path)
			return e
		}
	}
	var scratch string
	step(create(&rs.Router, RouterRepo))
	step(commit(&rs.Router, &rs.Tag, "main", "text-embeddings-router "+RouterTag, "", src, nil))
	step(func() error { return rs.Router.Tag(ctx, RouterTag, rs.Tag, true) })
	step(func() (e error) { rs.TagObject, e = rs.Router.RevParse(ctx, RouterTag); return e })
	step(commit(&rs.Router, &rs.Inner, "main", "work after "+RouterTag, "", "", nil))
	step(commit(&rs.Router, &scratch, "main", "more work on main", "", "", nil))
	step(func() error { return rs.Router.Branch(ctx, RouterBranch, rs.Tag) })
	step(commit(&rs.Router, &rs.Branch, RouterBranch, "a fix on the release branch", "", "", nil))

	step(create(&rs.Monorepo, MonorepoRepo))
	step(commit(&rs.Monorepo, &rs.MonorepoTag, "main", "embedder: the router and its service", MonorepoDir, src,
		map[string]string{"README.md": "The router is in " + MonorepoDir + ".\n"}))
	step(func() error { return rs.Monorepo.Tag(ctx, RouterTag, rs.MonorepoTag, true) })

	step(create(&rs.Private, PrivateRepo))
	step(commit(&rs.Private, &rs.PrivateTag, "main", "private text-embeddings-router "+RouterTag, "", src, nil))
	step(func() error { return rs.Private.Tag(ctx, RouterTag, rs.PrivateTag, true) })
	if err != nil {
		return fmt.Errorf("the router's git repositories: %w", err)
	}
	return nil
}

// Close stops the server and removes the repositories' work trees.
func (rs *RouterSource) Close() error {
	for _, r := range []*gitserver.Repo{rs.Router, rs.Monorepo, rs.Private} {
		if r != nil {
			_ = r.Close()
		}
	}
	return rs.Server.Close()
}
