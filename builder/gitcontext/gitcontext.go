// Package gitcontext is the router's git build context as BuildKit's git
// source sees it: the remote and the ref the Dockerfile frontend parses
// from it (dfgitutil.ParseGitRef), the secrets BuildKit looks up to
// authenticate to it, the context pinned to a commit, the commit its ref
// resolves to by git ls-remote (as BuildKit resolves it), and BuildKit's
// and git's failures for it, each as one sentence with the fix.
package gitcontext

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/frontend/dockerfile/dfgitutil"
	"github.com/moby/buildkit/util/gitutil"
	"github.com/moby/buildkit/util/urlutil"
)

// TokenEnv and HeaderEnv are the environment variables jetbake hands to
// BuildKit as the git context's GIT_AUTH_TOKEN.<host> and
// GIT_AUTH_HEADER.<host> secrets, as buildx bake hands on
// BUILDX_BAKE_GIT_AUTH_TOKEN and BUILDX_BAKE_GIT_AUTH_HEADER for a remote
// definition (buildx's bake/gitauth.go).
const (
	TokenEnv  = "JETBAKE_GIT_AUTH_TOKEN"
	HeaderEnv = "JETBAKE_GIT_AUTH_HEADER"
)

// Context is a git build context: what was written and what BuildKit reads
// in it.
type Context struct {
	// Raw is the context as the matrix writes it.
	Raw string
	// Ref is the context as BuildKit's Dockerfile frontend parses it.
	Ref *dfgitutil.GitRef
}

// Parse parses a build context as BuildKit's Dockerfile frontend does; it
// returns false for anything BuildKit reads as a local folder.
func Parse(context string) (*Context, bool) {
	ref, isGit, err := dfgitutil.ParseGitRef(context)
	if err != nil || !isGit || ref == nil {
		return nil, false
	}
	return &Context{Raw: context, Ref: ref}, true
}

// String is the context with any credentials in its URL masked, for
// messages and reports.
func (c *Context) String() string { return Redact(c.Raw) }

// Redact masks the user name and password in a URL, as BuildKit does in
// its own messages (urlutil.RedactCredentials).
func Redact(s string) string { return urlutil.RedactCredentials(s) }

// Remote is the repository's URL, credentials masked.
func (c *Context) Remote() string { return Redact(c.fetchURL()) }

// fetchURL is the URL BuildKit's git source fetches: the remote as
// llb.Git makes it, https:// added to a remote without a scheme
// ("github.com/org/repo").
func (c *Context) fetchURL() string {
	remote, err := gitutil.ParseURL(c.Ref.Remote)
	if errors.Is(err, gitutil.ErrUnknownProtocol) {
		remote, err = gitutil.ParseURL("https://" + c.Ref.Remote)
	}
	if err != nil {
		return c.Ref.Remote
	}
	return remote.Remote
}

// Host is the host (and port) that BuildKit's git source keys the
// context's credentials by: the host of the remote's URL, e.g.
// "github.com" or "127.0.0.1:8080" (source/git/source.go,
// authSecretNames). It is "" for an scp-like remote (git@host:repo.git),
// which BuildKit reaches with SSH keys only.
func (c *Context) Host() string {
	u, err := url.Parse(c.fetchURL())
	if err != nil {
		return ""
	}
	return u.Host
}

// HasPassword reports whether the context's URL holds a password or
// token, which would then be in the matrix, the logs and the provenance.
func (c *Context) HasPassword() bool {
	u, err := gitutil.ParseURL(c.Ref.Remote)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

// SecretIDs are the secrets BuildKit's git source looks up for the
// context, in its order, and takes the first it finds: the header, then
// the token, for the context's host, then for every host.
func (c *Context) SecretIDs() []string {
	var ids []string
	if h := c.Host(); h != "" {
		ids = append(ids, llb.GitAuthHeaderKey+"."+h, llb.GitAuthTokenKey+"."+h)
	}
	return append(ids, llb.GitAuthHeaderKey, llb.GitAuthTokenKey)
}

// Pinned is the context with its commit pinned to commit as well as its
// ref: the query form "REMOTE?ref=REF&checksum=COMMIT" (with subdir and
// the other options it had), which BuildKit parses to the same source with
// a checksum. BuildKit then fails the build when the ref no longer
// resolves to commit. A context that pins its own checksum is returned as
// written.
func (c *Context) Pinned(commit string) string {
	g := c.Ref
	if commit == "" || g.Checksum != "" {
		return c.Raw
	}
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("ref", g.Ref)
	set("subdir", g.SubDir)
	set("checksum", commit)
	set("mtime", g.MTime)
	if g.KeepGitDir != nil {
		q.Set("keep-git-dir", strconv.FormatBool(*g.KeepGitDir))
	}
	if g.Submodules != nil {
		q.Set("submodules", strconv.FormatBool(*g.Submodules))
	}
	if g.FetchByCommit {
		q.Set("fetch-by-commit", "true")
	}
	return g.Remote + "?" + q.Encode()
}

// RefName is the ref as a user would name it: "v1.8.0" for
// refs/tags/v1.8.0 or v1.8.0, "main" for refs/heads/main.
func RefName(ref string) string {
	for _, p := range []string{"refs/tags/", "refs/heads/"} {
		if s, ok := strings.CutPrefix(ref, p); ok {
			return s
		}
	}
	return ref
}

// RefKind names what a full ref is: "tag", "branch", or "ref".
func RefKind(ref string) string {
	switch {
	case strings.HasPrefix(ref, "refs/tags/"):
		return "tag"
	case strings.HasPrefix(ref, "refs/heads/"):
		return "branch"
	case gitutil.IsCommitSHA(ref):
		return "commit"
	}
	return "ref"
}
