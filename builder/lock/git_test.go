package lock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/gitserver"
	"github.com/jetbake/jetbake/builder/plan"
)

// gitPlan is testPlan with its router at context.
func gitPlan(context string) *plan.Plan {
	p := testPlan()
	p.Router.Context = context
	return p
}

func TestGitPins(t *testing.T) {
	ctx := t.Context()
	srv := gitserver.New(t)
	repo, c1, c2, err := srv.Tagged(ctx, "router.git", "v1.8.0", "main")
	require.NoError(t, err)
	defer repo.Close()
	context := srv.HTTPURL("router.git") + "#v1.8.0"
	p := gitPlan(context)

	pins, err := ResolveGit(ctx, p, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]GitPin{context: {Ref: "refs/tags/v1.8.0", Commit: c1}}, pins)
	none, err := ResolveGit(ctx, gitPlan("/src/router"), nil)
	require.NoError(t, err)
	require.Nil(t, none, "a local router has nothing to pin")

	dir := t.TempDir()
	matrixPath := filepath.Join(dir, "matrix.json")
	lf := &File{SchemaVersion: 1, Bases: map[string]string{}, GitContexts: pins}
	require.NoError(t, lf.Write(filepath.Join(dir, DefaultFile)))
	back, err := Read(filepath.Join(dir, DefaultFile))
	require.NoError(t, err)
	require.Equal(t, lf, back)
	require.NoError(t, back.CheckGit(ctx, p, nil))

	pin, path, err := GitPinned(ctx, p, PinsOptions{MatrixPath: matrixPath, Check: true}, nil)
	require.NoError(t, err)
	require.Equal(t, GitPin{Ref: "refs/tags/v1.8.0", Commit: c1}, pin)
	require.Equal(t, filepath.Join(dir, DefaultFile), path)

	// The tag moves.
	require.NoError(t, repo.Tag(ctx, "v1.8.0", c2, true))
	err = back.CheckGit(ctx, p, nil)
	require.EqualError(t, err, "the lock file is stale: router.context "+context+": the tag v1.8.0 moved from "+c1+" to "+c2+
		"; run 'jetbake lock' to pin the new commit after checking it")
	_, _, err = GitPinned(ctx, p, PinsOptions{MatrixPath: matrixPath, Check: true}, nil)
	require.ErrorContains(t, err, "the tag v1.8.0 moved from "+c1+" to "+c2)
	pin, _, err = GitPinned(ctx, p, PinsOptions{MatrixPath: matrixPath}, nil)
	require.NoError(t, err, "without --check-lock the build itself finds the move")
	require.Equal(t, c1, pin.Commit)

	// Another context, and a pin the matrix no longer uses.
	other := gitPlan(srv.HTTPURL("router.git") + "#main")
	err = back.CheckGit(ctx, other, nil)
	require.ErrorContains(t, err, "router.context "+srv.HTTPURL("router.git")+"#main is not in the lock file; router.context "+context+" is pinned but the matrix does not use it")
	pin, _, err = GitPinned(ctx, other, PinsOptions{MatrixPath: matrixPath}, nil)
	require.NoError(t, err)
	require.Empty(t, pin.Commit, "no pin: the build takes what the ref names")
}

func TestReadGitContexts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DefaultFile)
	write := func(s string) {
		require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
	}
	// A lock file of an earlier jetbake: no git contexts, still read.
	write(`{"schema_version": 1, "bases": {}}`)
	lf, err := Read(path)
	require.NoError(t, err)
	require.Nil(t, lf.GitContexts)
	pin, _, err := GitPinned(t.Context(), gitPlan("https://github.com/acme/router.git#v1"), PinsOptions{File: path}, nil)
	require.NoError(t, err)
	require.Empty(t, pin)

	write(`{"schema_version": 1, "bases": {}, "git_contexts": {"https://github.com/acme/router.git#v1": {"ref": "refs/tags/v1", "commit": "abc"}}}`)
	_, err = Read(path)
	require.ErrorContains(t, err, `git_contexts["https://github.com/acme/router.git#v1"].commit`)
	require.ErrorContains(t, err, "is not a full commit (40 or 64 hex digits)")

	write(`{"schema_version": 1, "bases": {}, "git_contexts": {"./router": {"ref": "refs/tags/v1", "commit": "a9bbc3f78802bf57d53e5cfaa1a60788d326633e"}}}`)
	_, err = Read(path)
	require.ErrorContains(t, err, "is not a git context")
}

// An app's git context is pinned as a router's: ResolveGit pins its
// commit, and CheckGit catches the commit moving, naming app.context.
func TestGitPinsApp(t *testing.T) {
	ctx := t.Context()
	srv := gitserver.New(t)
	repo, c1, c2, err := srv.Tagged(ctx, "app.git", "v0.1.0", "main")
	require.NoError(t, err)
	defer repo.Close()
	context := srv.HTTPURL("app.git") + "#main"
	p := testPlan()
	p.Router = plan.Router{}
	p.App = &plan.App{Name: "obliteratus", Context: context}

	pins, err := ResolveGit(ctx, p, nil)
	require.NoError(t, err)
	require.Len(t, pins, 1)
	lf := &File{SchemaVersion: 1, Bases: map[string]string{}, GitContexts: pins}
	require.Equal(t, "refs/heads/main", pins[context].Ref)
	require.NoError(t, lf.CheckGit(ctx, p, nil))
	pin, err := lf.GitPin(ctx, p, true, nil)
	require.NoError(t, err)
	require.Equal(t, pins[context], pin)

	// The branch moves to another commit.
	moveTo := c1
	if pins[context].Commit == c1 {
		moveTo = c2
	}
	require.NoError(t, repo.Branch(ctx, "main", moveTo))
	err = lf.CheckGit(ctx, p, nil)
	require.EqualError(t, err, "the lock file is stale: app.context "+context+": the branch main moved from "+pins[context].Commit+" to "+moveTo+
		"; run 'jetbake lock' to pin the new commit after checking it")
	_, err = lf.GitPin(ctx, p, true, nil)
	require.Error(t, err)
}
