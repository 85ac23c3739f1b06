package gitcontext

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/session/secrets"
	"github.com/moby/buildkit/util/gitutil"
)

// Commit is what a git context's ref resolves to.
type Commit struct {
	// Ref is the full ref the name resolved to ("refs/tags/v1.8.0",
	// "refs/heads/release-1.8"), or the commit when the context names one.
	Ref string `json:"ref"`
	// Commit is the commit that is checked out: for an annotated tag, the
	// commit it points at, not the tag object.
	Commit string `json:"commit"`
	// object is what ls-remote lists for the ref: the tag object of an
	// annotated tag, else the commit.
	object string
}

// Matches reports whether checksum, a commit or a prefix of one, is the
// commit or the tag object, as BuildKit's checksum check accepts either.
func (c Commit) Matches(checksum string) bool {
	return strings.HasPrefix(c.Commit, checksum) || (c.object != "" && strings.HasPrefix(c.object, checksum))
}

// Resolve asks the remote which commit the context's ref names, as
// BuildKit's git source does before it fetches (git ls-remote REMOTE REF
// REF^{}, then ParseLsRemote), with the credentials BuildKit would use:
// the first of SecretIDs that store holds (nil for none), sent as
// BuildKit sends it. git runs as BuildKit runs it (BuildKit's gitutil: no
// user or system configuration, no prompts). A commit given as the ref is
// returned as is, as BuildKit does. A context with a checksum fails as
// BuildKit's build would when the ref resolves elsewhere. Errors are
// *Error sentences where Describer knows them.
func (c *Context) Resolve(ctx context.Context, store secrets.SecretStore, d Describer) (Commit, error) {
	d.Context = c
	ref := c.Ref.Ref
	if ref == "" {
		return Commit{}, d.Describe(errors.New("the context names no ref"))
	}
	var got Commit
	if gitutil.IsCommitSHA(ref) {
		got = Commit{Ref: ref, Commit: ref}
	} else {
		header, id, err := c.authHeader(ctx, store)
		if err != nil {
			return Commit{}, err
		}
		if id != "" && len(d.Credentials) == 0 {
			d.Credentials = []string{id}
		}
		if _, err := exec.LookPath("git"); err != nil {
			return Commit{}, fmt.Errorf("router.context %q: resolving its commit needs git, which is not installed: install git (jetbake runs git ls-remote, as BuildKit does)", c.String())
		}
		remote := c.fetchURL()
		git := gitutil.NewGitCLI(gitutil.WithExec(withConfig(header, remote)), gitutil.WithSSHAuthSock(os.Getenv("SSH_AUTH_SOCK")))
		out, err := git.Run(ctx, "ls-remote", "--", remote, ref, ref+"^{}")
		if err != nil {
			// BuildKit's own words, so that one Describer reads both.
			return Commit{}, d.Describe(fmt.Errorf("failed to fetch remote %s: %w", c.Remote(), err))
		}
		if got, err = ParseLsRemote(ref, string(out)); err != nil {
			return Commit{}, d.Describe(err)
		}
	}
	if sum := c.Ref.Checksum; sum != "" && !got.Matches(sum) {
		return Commit{}, d.Describe(fmt.Errorf("expected checksum to match %s, got %s", sum, got.Commit))
	}
	return got, nil
}

// authHeader is the Authorization header BuildKit's git source sends for
// the context (source/git/source.go, getAuthToken): the first secret of
// SecretIDs in store; a token as basic auth of "x-access-token" and the
// token, a header as it is; and the secret's id. Both are "" when store
// holds none.
func (c *Context) authHeader(ctx context.Context, store secrets.SecretStore) (header, id string, err error) {
	if store == nil {
		return "", "", nil
	}
	for _, id := range c.SecretIDs() {
		dt, err := store.GetSecret(ctx, id)
		if errors.Is(err, secrets.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("secret %s: %w", id, err)
		}
		if strings.HasPrefix(id, llb.GitAuthTokenKey) {
			return "basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+string(dt))), id, nil
		}
		return string(dt), id, nil
	}
	return "", "", nil
}

// withConfig runs git with the Authorization header as configuration
// given in the environment (GIT_CONFIG_COUNT), where BuildKit gives it on
// git's command line: on the machine jetbake runs on, the command line is
// visible to every user, the environment is not. It stops git when ctx
// ends.
func withConfig(header, remote string) func(context.Context, *exec.Cmd) error {
	return func(ctx context.Context, cmd *exec.Cmd) error {
		if header != "" {
			cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1",
				"GIT_CONFIG_KEY_0=http."+tokenScope(remote)+".extraheader", "GIT_CONFIG_VALUE_0=Authorization: "+header)
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-done
			return ctx.Err()
		}
	}
}

// tokenScope is the URL the header is configured for, as BuildKit scopes
// it (source/git/source.go, tokenScope): every github.com repository for a
// github.com remote, else the remote itself.
func tokenScope(remote string) string {
	for _, pfx := range []string{"https://github.com/", "https://www.github.com/"} {
		if strings.HasPrefix(remote, pfx) {
			return pfx
		}
	}
	return remote
}

// ParseLsRemote picks the commit that ref names from git ls-remote's
// output, by the rules of BuildKit's git source (source/git/source.go,
// resolveMetadataFromURL, which BuildKit does not export): an exact
// "refs/..." match first, then a branch, then a tag, an annotated tag by
// the commit it points at ("^{}" line). It fails, as BuildKit does, when
// nothing matches.
func ParseLsRemote(ref, output string) (Commit, error) {
	var (
		partialRef   = "refs/" + strings.TrimPrefix(ref, "refs/")
		headRef      = "refs/heads/" + strings.TrimPrefix(ref, "refs/heads/")
		tagRef       = "refs/tags/" + strings.TrimPrefix(ref, "refs/tags/")
		annotatedRef = tagRef + "^{}"
	)
	var sha, headSha, tagSha, peeled, used string
	for _, line := range strings.Split(output, "\n") {
		lineSha, lineRef, _ := strings.Cut(strings.TrimSuffix(line, "\r"), "\t")
		switch lineRef {
		case headRef:
			headSha = lineSha
		case tagRef:
			tagSha = lineSha
		case annotatedRef:
			peeled = lineSha
		case partialRef:
			sha, used = lineSha, lineRef
		}
	}
	if sha == "" && headSha != "" {
		sha, used = headSha, headRef
	}
	if sha != "" {
		peeled = "" // a branch or exact ref wins over an annotated tag
	} else {
		sha, used = tagSha, tagRef
	}
	if sha == "" {
		return Commit{}, fmt.Errorf("repository does not contain ref %s, output: %q", ref, output)
	}
	if !gitutil.IsCommitSHA(sha) || (peeled != "" && !gitutil.IsCommitSHA(peeled)) {
		return Commit{}, fmt.Errorf("invalid commit sha %q", sha)
	}
	c := Commit{Ref: used, Commit: sha, object: sha}
	if peeled != "" {
		c.Commit = peeled
	}
	return c, nil
}
