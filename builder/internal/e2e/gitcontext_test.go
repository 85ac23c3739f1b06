package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/buildkit/session/secrets"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/lock"
)

// gitRelease is the one release each git-context build builds: one SM target.
const gitRelease = "jetpack6.2"

// gitBed is the fixture, the git server and a user's repository: the
// matrix and the router's Dockerfile, the router's source a git context.
type gitBed struct {
	f      *fixture
	src    *RouterSource
	user   string // the user's repository: matrix.json and Dockerfile
	runner *runimage.Runner
	hosts  map[string]runimage.Host
	// builds records, per form, the commit BuildKit built.
	builds []string
}

// TestGitContext builds the router from git contexts as users give them,
// served by git daemon and git http-backend on 127.0.0.1: a tag, a branch,
// a commit, a ref with its checksum and a tag's subfolder, each built by
// `jetbake build` and run on a fake Orin; then the pins (a moved tag after
// `jetbake lock`, a checksum), a private repository's token, which nothing
// jetbake writes or pushes holds, and the failures' sentences.
func TestGitContext(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	token := "jetbake-planted-git-token-" + randomHex(t)
	src, err := ServeRouterSource(ctx, f.env.RepoRoot, filepath.Join(f.work, "git"), token)
	require.NoError(t, err)
	t.Cleanup(func() { _ = src.Close() })
	b := &gitBed{f: f, src: src, user: filepath.Join(f.work, "user")}
	require.NoError(t, os.MkdirAll(b.user, 0o755))
	p, err := LoadPlan(b.matrix(t, "standins.json", src.Server.HTTPURL(RouterRepo)+"#"+RouterTag))
	require.NoError(t, err)
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	b.hosts = f.hosts(t, "hosts")
	b.runner, err = runimage.NewRunner(filepath.Join(f.work, "bundles"))
	require.NoError(t, err)
	srv := src.Server

	t.Run("each form builds the commit it names", func(t *testing.T) {
		for _, form := range []struct{ name, context, commit string }{
			{"#TAG over git://", srv.GitURL(RouterRepo) + "#" + RouterTag, src.Tag},
			{"#BRANCH", srv.HTTPURL(RouterRepo) + "#" + RouterBranch, src.Branch},
			{"#COMMIT", srv.HTTPURL(RouterRepo) + "#" + src.Inner, src.Inner},
			{"?ref=TAG&checksum=COMMIT", srv.HTTPURL(RouterRepo) + "?ref=" + RouterTag + "&checksum=" + src.Tag, src.Tag},
			{"#TAG:subdir", srv.HTTPURL(MonorepoRepo) + "#" + RouterTag + ":" + MonorepoDir, src.MonorepoTag},
		} {
			rr, stderr := b.buildOK(t, form.context)
			b.checkBuilt(t, form.name, form.context, rr, form.commit, nil)
			if form.name == "#BRANCH" {
				require.Contains(t, stderr, fmt.Sprintf("jetbake: warning: router.context %q names the branch %s, which moves: this build took commit %s",
					form.context, RouterBranch, src.Branch))
			} else {
				require.NotContains(t, stderr, "names the branch")
			}
		}
	})

	t.Run("an unpinned branch is refused by validate", func(t *testing.T) {
		context := srv.HTTPURL(RouterRepo) + "#main"
		code, _, stderr := jetbake(ctx, "validate", "-f", b.matrix(t, "main.json", context))
		require.Equal(t, 1, code, stderr)
		require.Contains(t, stderr, `git context is pinned to the branch "main", which moves`)
	})

	t.Run("a tag moved after jetbake lock", func(t *testing.T) { b.movedTag(t) })
	t.Run("a private repository's token", func(t *testing.T) { b.private(t) })
	t.Run("failures in one sentence", func(t *testing.T) { b.failures(t) })
	// What BuildKit built for each form, for the record (go test -v).
	for _, line := range b.builds {
		t.Log(line)
	}
}

// matrix writes the demo matrix with the router's source at context into the user's repository as file, keeping gitRelease only, with the
// demo's Dockerfile copied beside it and named relative to the matrix,
// as a user's repository holds it.
func (b *gitBed) matrix(t *testing.T, file, context string) string {
	t.Helper()
	path := filepath.Join(b.user, file)
	require.NoError(t, WriteDemoMatrix(b.f.env.RepoRoot, b.f.env.Registry, path, func(m map[string]any) {
		keepReleases(m, gitRelease)
		r := m["router"].(map[string]any)
		df, err := os.ReadFile(r["dockerfile"].(string))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(b.user, "Dockerfile"), df, 0o644))
		r["context"], r["dockerfile"] = context, "Dockerfile"
	}))
	return path
}

// jetbake runs a jetbake command on a matrix of the user's repository.
func (b *gitBed) jetbake(t *testing.T, matrixPath string, args ...string) (int, string, string) {
	t.Helper()
	common := []string{"-f", matrixPath, "--mirror", "nvcr.io=" + b.f.env.Registry}
	if args[0] == "build" {
		common = append(common, "--addr", b.f.env.Daemon.Addr, "--entrypoint-dir", b.f.entrypointDir)
	}
	return jetbake(t.Context(), append(append([]string{args[0]}, common...), args[1:]...)...)
}

// build builds the matrix with its router at context and returns the
// exit code, the release's report and standard error.
func (b *gitBed) build(t *testing.T, context string, args ...string) (int, imagebuild.ReleaseReport, string) {
	t.Helper()
	matrixPath := b.matrix(t, "matrix.json", context)
	metadata := filepath.Join(b.f.work, "git-build.json")
	_ = os.Remove(metadata)
	code, stdout, stderr := b.jetbake(t, matrixPath, append([]string{"build", "--push", "--metadata-file", metadata, "--progress", "plain"}, args...)...)
	data, err := os.ReadFile(metadata)
	require.NoError(t, err, "%s\n%s", stdout, stderr)
	var report imagebuild.Report
	require.NoError(t, json.Unmarshal(data, &report))
	require.Len(t, report.Releases, 1)
	return code, report.Releases[0], stdout + stderr
}

// buildOK builds context and requires it to succeed.
func (b *gitBed) buildOK(t *testing.T, context string, args ...string) (imagebuild.ReleaseReport, string) {
	t.Helper()
	code, rr, out := b.build(t, context, args...)
	require.Equal(t, 0, code, out)
	require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
	return rr, out
}

// checkBuilt checks that the release was built from commit, by jetbake's
// report and BuildKit's provenance, that `jetbake lock` resolves the
// context to the same commit, and that the image routes on a fake Orin.
func (b *gitBed) checkBuilt(t *testing.T, form, context string, rr imagebuild.ReleaseReport, commit string, store secrets.SecretStore) {
	t.Helper()
	require.NotNil(t, rr.RouterSource, form)
	require.Equal(t, context, rr.RouterSource.Context, form)
	require.Equal(t, commit, rr.RouterSource.Commit, "%s: the commit jetbake reports", form)
	material := provenanceGitCommit(t, rr.Repository+"@"+rr.Digest, context)
	tagObject := material != commit
	require.Equal(t, commit, b.peel(t, context, material), "%s: BuildKit's provenance names %s", form, material)
	p, err := LoadPlan(filepath.Join(b.user, "matrix.json"))
	require.NoError(t, err)
	pins, err := lock.ResolveGit(t.Context(), p, store)
	require.NoError(t, err)
	require.Equal(t, commit, pins[context].Commit, "%s: jetbake lock resolves the context as BuildKit does", form)
	require.Equal(t, rr.RouterSource.Ref, pins[context].Ref, form)

	ref := rr.Repository + "@" + rr.Digest
	images, err := Images(t.Context(), filepath.Join(b.f.work, "rootfs-git"), map[string]string{gitRelease: ref})
	require.NoError(t, err)
	out := RunChecks(t.Context(), b.runner, images, b.hosts, []Check{{Release: gitRelease, Host: "orin-jp6", WantArch: "sm_87"}})
	require.Truef(t, out[0].OK(), "%s on orin-jp6: %s\nstdout: %s\nstderr: %s", form, out[0].Summary(), out[0].Result.Stdout, out[0].Result.Stderr)
	note := fmt.Sprintf("%-26s %s: ref %s, commit %s; provenance %s", form, context, rr.RouterSource.Ref, rr.RouterSource.Commit, material)
	if tagObject {
		note += " (the tag object)"
	}
	b.builds = append(b.builds, note)
}

// peel is the commit that object (a commit or an annotated tag's object)
// of the repository of context on the server names.
func (b *gitBed) peel(t *testing.T, context, object string) string {
	t.Helper()
	u, err := url.Parse(strings.SplitN(context, "?", 2)[0])
	require.NoError(t, err)
	out, err := exec.Command("git", "--git-dir="+filepath.Join(b.src.Server.Root, u.Path), "rev-parse", object+"^{commit}").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.TrimSpace(string(out))
}

// provenanceGitCommit is the commit BuildKit's provenance attestation of
// the image at ref records for the git material of context (SLSA v0.2
// materials or v1 resolved dependencies).
func provenanceGitCommit(t *testing.T, ref, context string) string {
	t.Helper()
	type material struct {
		URI    string            `json:"uri"`
		Digest map[string]string `json:"digest"`
	}
	remoteURL, _, _ := strings.Cut(strings.SplitN(context, "?", 2)[0], "#")
	for kind, statements := range attestations(t, mustRef(t, ref)) {
		if !strings.HasPrefix(kind, "https://slsa.dev/provenance/") {
			continue
		}
		for _, dt := range statements {
			var stmt struct {
				Predicate struct {
					Materials       []material `json:"materials"`
					BuildDefinition struct {
						ResolvedDependencies []material `json:"resolvedDependencies"`
					} `json:"buildDefinition"`
				} `json:"predicate"`
			}
			require.NoError(t, json.Unmarshal(dt, &stmt))
			for _, m := range append(stmt.Predicate.Materials, stmt.Predicate.BuildDefinition.ResolvedDependencies...) {
				if strings.HasPrefix(m.URI, remoteURL) && m.Digest["sha1"] != "" {
					return m.Digest["sha1"]
				}
			}
		}
	}
	require.Fail(t, "no git material for "+context+" in the provenance of "+ref)
	return ""
}

// movedTag: `jetbake lock` pins the commit a tag names; once the tag moves,
// `lock --check` and the build fail naming the tag and both commits, and so
// does a context that pins the commit with its own checksum.
func (b *gitBed) movedTag(t *testing.T) {
	ctx := t.Context()
	srv := b.src.Server
	repo, err := srv.Create(ctx, "moving.git")
	require.NoError(t, err)
	defer repo.Close()
	first, err := repo.Commit(ctx, "main", "router "+RouterTag, "", filepath.Join(b.f.env.RepoRoot, TEISource), nil)
	require.NoError(t, err)
	require.NoError(t, repo.Tag(ctx, RouterTag, first, true))
	moved, err := repo.Commit(ctx, "main", "a commit the tag is moved to", "", "", nil)
	require.NoError(t, err)
	context := srv.HTTPURL("moving.git") + "#" + RouterTag
	matrixPath := b.matrix(t, "matrix.json", context)
	lockPath := filepath.Join(b.user, lock.DefaultFile)

	code, stdout, stderr := b.jetbake(t, matrixPath, "lock")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, context+": refs/tags/"+RouterTag+" "+first)
	lf, err := lock.Read(lockPath)
	require.NoError(t, err)
	require.Equal(t, map[string]lock.GitPin{context: {Ref: "refs/tags/" + RouterTag, Commit: first}}, lf.GitContexts)

	rr, _ := b.buildOK(t, context, "--check-lock")
	require.Equal(t, imagebuild.RouterSource{Context: context, Ref: "refs/tags/" + RouterTag, Commit: first, PinnedBy: lockPath}, *rr.RouterSource)
	b.checkBuilt(t, "#TAG, locked, over http://", context, rr, first, nil)

	require.NoError(t, repo.Tag(ctx, RouterTag, moved, true))
	code, _, stderr = b.jetbake(t, matrixPath, "lock", "--check")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, fmt.Sprintf("router.context %s: the tag %s moved from %s to %s", context, RouterTag, first, moved))

	want := fmt.Sprintf("router.context %q: the tag %s moved: %s pins commit %s, the repository now has %s: "+
		"check what changed, then run 'jetbake lock' to pin the new commit", context, RouterTag, lockPath, first, moved)
	code, rr, out := b.build(t, context)
	require.Equal(t, 1, code, out)
	require.Equal(t, want, rr.Error)
	require.Contains(t, out, want)

	pinned := srv.HTTPURL("moving.git") + "?ref=" + RouterTag + "&checksum=" + first
	code, rr, out = b.build(t, pinned)
	require.Equal(t, 1, code, out)
	require.Equal(t, fmt.Sprintf("router.context %q: the tag or branch %s moved: the context's checksum pins commit %s, the repository now has %s: "+
		"check what changed, then set checksum=%s in router.context", pinned, RouterTag, first, moved, moved), rr.Error)
	require.NoError(t, os.Remove(lockPath))
}

// private builds from a repository that needs a token over HTTP, given as
// --secret GIT_AUTH_TOKEN.<host> and from JETBAKE_GIT_AUTH_TOKEN, then
// searches everything jetbake wrote or pushed for the token.
func (b *gitBed) private(t *testing.T) {
	srv := b.src.Server
	token := b.src.PrivateToken
	context := srv.HTTPURL(PrivateRepo) + "#" + RouterTag
	id := "GIT_AUTH_TOKEN." + srv.HTTPAddr
	t.Setenv("JETBAKE_TEST_GIT_TOKEN", token)
	outputs := map[string]string{}

	before := len(srv.Requests())
	rr, out := b.buildOK(t, context, "--secret", "id="+id+",env=JETBAKE_TEST_GIT_TOKEN", "--provenance", "mode=max")
	outputs["build with --secret"] = out
	b.checkBuilt(t, "#TAG, private, --secret", context, rr, b.src.PrivateTag, tokenStore{id: token})
	authorized := 0
	for _, r := range srv.Requests()[before:] {
		if r.Authorized && r.Status == 200 {
			authorized++
		}
	}
	require.Positive(t, authorized, "the token reached the server")
	// The same token as the Authorization header itself.
	header := "basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	t.Setenv("JETBAKE_TEST_GIT_HEADER", header)
	rr, out = b.buildOK(t, context, "--secret", "id=GIT_AUTH_HEADER."+srv.HTTPAddr+",env=JETBAKE_TEST_GIT_HEADER")
	outputs["build with a header"] = out
	require.Equal(t, b.src.PrivateTag, rr.RouterSource.Commit)

	// The environment's token, as buildx bake takes BUILDX_BAKE_GIT_AUTH_TOKEN,
	// for jetbake lock and the build alike.
	t.Setenv("JETBAKE_GIT_AUTH_TOKEN", token)
	matrixPath := b.matrix(t, "matrix.json", context)
	code, stdout, stderr := b.jetbake(t, matrixPath, "lock")
	require.Equal(t, 0, code, stderr)
	outputs["lock"] = stdout + stderr
	lockFile, err := os.ReadFile(filepath.Join(b.user, lock.DefaultFile))
	require.NoError(t, err)
	outputs["lock file"] = string(lockFile)
	rr, out = b.buildOK(t, context, "--check-lock", "--progress", "rawjson", "--provenance", "mode=max")
	outputs["build from the environment"] = out
	require.Equal(t, b.src.PrivateTag, rr.RouterSource.Commit)
	require.Equal(t, filepath.Join(b.user, lock.DefaultFile), rr.RouterSource.PinnedBy)
	metadata, err := os.ReadFile(filepath.Join(b.f.work, "git-build.json"))
	require.NoError(t, err)
	outputs["metadata file"] = string(metadata)
	require.NoError(t, os.Remove(filepath.Join(b.user, lock.DefaultFile)))

	// A refused token and none at all.
	t.Setenv("JETBAKE_GIT_AUTH_TOKEN", "")
	t.Setenv("JETBAKE_TEST_WRONG_TOKEN", "wrong-"+token)
	code, rr, out = b.build(t, context, "--secret", "id="+id+",env=JETBAKE_TEST_WRONG_TOKEN")
	require.Equal(t, 1, code, out)
	require.Equal(t, fmt.Sprintf("router.context %q: %s refused the credentials given (%s): "+
		"check that the token is valid and may read the repository, and that the URL names the right repository", context, srv.HTTPAddr, id), rr.Error)
	outputs["refused build"] = out
	code, rr, out = b.build(t, context)
	require.Equal(t, 1, code, out)
	require.Equal(t, fmt.Sprintf("router.context %q: %s asks for credentials (the repository is private, or does not exist) and none were given: "+
		"give a token that may read it: --secret id=%s,env=VAR, or set JETBAKE_GIT_AUTH_TOKEN", context, srv.HTTPAddr, id), rr.Error)

	contents := registryContents(t, b.f.env.Registry)
	forms := []string{token, base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))}
	for _, secret := range forms {
		for what, text := range outputs {
			require.NotContains(t, text, secret, what)
		}
		require.Empty(t, whereFound(contents, secret), "the token in the registry")
	}
	// The search reaches what it must: the provenance names the private
	// repository and the secret's id, and the build's output its commit.
	found := whereFound(contents, PrivateRepo)
	require.True(t, anyKey(found, "in-toto"), "the provenance is searched: %v", found)
	require.True(t, anyKey(whereFound(contents, "GIT_AUTH_TOKEN"), "in-toto"), "the provenance names the secret's id only")
	require.Contains(t, outputs["build from the environment"], b.src.PrivateTag)
}

// tokenStore holds one secret.
type tokenStore map[string]string

func (s tokenStore) GetSecret(_ context.Context, id string) ([]byte, error) {
	if v, ok := s[id]; ok {
		return []byte(v), nil
	}
	return nil, secrets.ErrNotFound
}

// failures: each git failure is one sentence naming the context, the cause
// and the fix, in the build's output and its metadata, for the build and
// for jetbake lock.
func (b *gitBed) failures(t *testing.T) {
	srv := b.src.Server
	const noCommit = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name, context, want string
		lockToo             bool // jetbake lock fails the same way (it does not fetch commits or folders)
	}{
		{"unknown host", "http://git.jetbake.invalid/router.git#" + RouterTag,
			"the host git.jetbake.invalid is not known (no DNS name resolves to it): correct the host in the URL, or check the DNS and network of %s", true},
		{"no such repository over http://", srv.HTTPURL("nope.git") + "#" + RouterTag,
			srv.HTTPAddr + " has no repository /nope.git (or does not serve it): correct the repository's path in the URL", true},
		{"no such repository over git://", srv.GitURL("nope.git") + "#" + RouterTag,
			srv.GitAddr + " has no repository /nope.git (or does not serve it): correct the repository's path in the URL", true},
		{"unknown tag", srv.HTTPURL(RouterRepo) + "#v9.9.9",
			"the repository " + srv.HTTPURL(RouterRepo) + " has no tag or branch v9.9.9: correct the ref after '#' (or ref=): git ls-remote --tags " +
				srv.HTTPURL(RouterRepo) + " lists the tags", true},
		// Found only when BuildKit checks the commit out, after the resolve:
		// the build's own error, read by the same Describer.
		{"unknown commit", srv.HTTPURL(RouterRepo) + "#" + noCommit,
			"the repository " + srv.HTTPURL(RouterRepo) + " has no commit " + noCommit +
				": correct the commit, given in full; or pin a tag and its commit: ?ref=TAG&checksum=COMMIT", false},
		{"no such folder", srv.HTTPURL(RouterRepo) + "#" + RouterTag + ":services/router",
			"the repository " + srv.HTTPURL(RouterRepo) + " has no folder services/router at " + RouterTag +
				": correct the folder after ':' (or subdir=): it is relative to the repository's root", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := fmt.Sprintf("router.context %q: ", tc.context) + tc.want
			// Without BuildKit's progress, which shows each step's own output,
			// git's included, jetbake says only its sentence.
			code, rr, out := b.build(t, tc.context, "--progress", "none")
			require.Equal(t, 1, code, out)
			require.Equal(t, strings.ReplaceAll(want, "%s", "the BuildKit daemon"), rr.Error)
			require.Contains(t, out, rr.Error)
			require.NotContains(t, out, "git stderr")
			require.NotContains(t, out, "fatal:")
			t.Logf("build: %s", rr.Error)
			if !tc.lockToo {
				return
			}
			code, _, stderr := b.jetbake(t, b.matrix(t, "matrix.json", tc.context), "lock")
			require.Equal(t, 1, code, stderr)
			require.Contains(t, stderr, strings.ReplaceAll(want, "%s", "this machine (jetbake resolves the ref with git ls-remote)"))
		})
	}
}
