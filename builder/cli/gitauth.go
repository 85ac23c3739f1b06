package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/session/secrets"
	"github.com/moby/buildkit/session/secrets/secretsprovider"

	"github.com/jetbake/jetbake/builder/gitcontext"
	"github.com/jetbake/jetbake/builder/imagebuild"
)

// secretSet is what a command hands BuildKit, or git, as secrets: the
// --secret values, and for a git router context the credentials of the
// environment (see newSecretSet).
type secretSet struct {
	// store holds them; nil for none.
	store secrets.SecretStore
	// gitIDs are the ids of those the git source of the router's context
	// reads (gitcontext.Context.SecretIDs), in BuildKit's order.
	gitIDs []string
}

// newSecretSet parses the --secret values and, when routerContext is a
// git context, adds JETBAKE_GIT_AUTH_TOKEN and JETBAKE_GIT_AUTH_HEADER as
// its host's GIT_AUTH_TOKEN.<host> and GIT_AUTH_HEADER.<host>, as buildx
// bake adds BUILDX_BAKE_GIT_AUTH_TOKEN and BUILDX_BAKE_GIT_AUTH_HEADER
// for a remote definition (buildx's bake/gitauth.go). A --secret with the
// same id wins. BuildKit's git source sends the first of them it finds as
// the Authorization header, to that remote only.
func newSecretSet(values []string, routerContext string) (secretSet, error) {
	sources, err := parseSecretSources(values)
	if err != nil {
		return secretSet{}, err
	}
	var set secretSet
	if c, ok := gitcontext.Parse(routerContext); ok {
		sources = append(sources, envGitSecrets(c, sources)...)
		for _, id := range c.SecretIDs() {
			if slices.ContainsFunc(sources, func(s secretsprovider.Source) bool { return s.ID == id }) {
				set.gitIDs = append(set.gitIDs, id)
			}
		}
	}
	if len(sources) == 0 {
		return set, nil
	}
	if set.store, err = secretsprovider.NewStore(sources); err != nil {
		return secretSet{}, usageErrorf("--secret: %w", err)
	}
	return set, nil
}

// envGitSecrets are the git credentials of the environment for c's host
// that no source gives already.
func envGitSecrets(c *gitcontext.Context, given []secretsprovider.Source) []secretsprovider.Source {
	host := c.Host()
	if host == "" {
		return nil
	}
	var out []secretsprovider.Source
	for key, env := range map[string]string{llb.GitAuthTokenKey: gitcontext.TokenEnv, llb.GitAuthHeaderKey: gitcontext.HeaderEnv} {
		id := key + "." + host
		if v := os.Getenv(env); v == "" || slices.ContainsFunc(given, func(s secretsprovider.Source) bool { return s.ID == id }) {
			continue
		}
		out = append(out, secretsprovider.Source{ID: id, Env: env})
	}
	slices.SortFunc(out, func(a, b secretsprovider.Source) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// printRouterSource says, once, which commit the router's git context was
// built from, and warns when that came from a branch nothing pinned: the
// next build may take another commit.
func printRouterSource(stderr io.Writer, r *imagebuild.Report) {
	for _, rr := range r.Releases {
		src := rr.RouterSource
		if src == nil || src.Commit == "" {
			continue
		}
		fmt.Fprintf(stderr, "jetbake: router.context %q: built commit %s (%s)\n", src.Context, src.Commit, src.Ref)
		if src.PinnedBy == "" && gitcontext.RefKind(src.Ref) == "branch" {
			branch := gitcontext.RefName(src.Ref)
			fmt.Fprintf(stderr, "jetbake: warning: router.context %q names the branch %s, which moves: this build took commit %s; pin it with 'jetbake lock', or with ?ref=%s&checksum=%s\n",
				src.Context, branch, src.Commit, branch, src.Commit)
		}
		return
	}
}
