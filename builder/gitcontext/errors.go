package gitcontext

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/moby/buildkit/util/gitutil"
)

// Error is a git context's failure as one sentence: the context, what went
// wrong and the fix. It wraps the error BuildKit or git gave, whose text it
// does not repeat.
type Error struct {
	// Context is the context, credentials masked.
	Context string
	// Cause says what went wrong.
	Cause string
	// Fix says what to do.
	Fix string
	// Err is the error as BuildKit or git gave it.
	Err error
}

// Error is the failure in one sentence, with its fix.
func (e *Error) Error() string {
	return fmt.Sprintf("router.context %q: %s: %s", e.Context, e.Cause, e.Fix)
}

// Unwrap returns the git or BuildKit error the sentence stands for.
func (e *Error) Unwrap() error { return e.Err }

// Describer turns the failures of one git context into sentences. It is
// the one place that reads BuildKit's and git's messages for them.
type Describer struct {
	// Context is the git context.
	Context *Context
	// Credentials are the ids of the secrets given for it (see SecretIDs),
	// never their values; none means none were given.
	Credentials []string
	// LockFile names the lock file whose commit was pinned, "" when the
	// context's own checksum pins it, or nothing does; LockedRef is the
	// full ref it recorded ("refs/tags/v1.8.0").
	LockFile, LockedRef string
	// Fetcher is what fetches the repository, for the fixes that concern
	// its network: "the BuildKit daemon" unless set.
	Fetcher string
}

// The texts BuildKit's git source (source/git/source.go) and git give,
// as seen from BuildKit v0.34 running git 2.39 against git daemon and git
// http-backend (see the table of errors_test.go).
var (
	// BuildKit's words around every git failure of a remote, before its
	// URL (credentials masked), and those without a URL.
	remoteMarkers = []string{"failed to fetch remote ", "failed to checkout remote ", "error fetching default branch for repository ",
		"failed to rev-parse "}
	otherMarkers  = []string{"repository does not contain ref ", "expected checksum to match ", "invalid subdir "}
	unknownHost   = regexp.MustCompile(`Could not resolve host: ([^\s']+)|unable to look up ([^\s']+) \(port|Could not resolve hostname ([^\s:']+)`)
	noConnection  = regexp.MustCompile(`Failed to connect to ([^\s']+) port (\d+)|unable to connect to ([^\s']+?):|Connection refused|Connection timed out|Could not connect to server`)
	noRepository  = regexp.MustCompile(`repository '[^']*' not found|access denied or repository not exported: (\S+)|remote: Repository not found`)
	credentials   = regexp.MustCompile(`could not read (?:Username|Password) for|Authentication failed for|The requested URL returned error: 40[13]|terminal prompts disabled|Permission denied \(publickey`)
	unknownRef    = regexp.MustCompile(`repository does not contain ref (\S+?),`)
	unknownCommit = regexp.MustCompile(`reference is not a tree: ([0-9a-fA-F]+)|not our ref ([0-9a-fA-F]+)|unadvertised object ([0-9a-fA-F]+)`)
	noSubdir      = regexp.MustCompile(`invalid subdir (\S+?): .*no such file or directory`)
	checksum      = regexp.MustCompile(`expected checksum to match ([0-9a-fA-F]+), got ([0-9a-fA-F]*)(?: or ([0-9a-fA-F]+))?`)
)

// Describe returns err as an *Error when it is a failure of the context
// that Describer knows, else err itself. It reads only errors that carry
// BuildKit's words for a git source (or Resolve's, which are the same)
// with this context's remote, so that a failure of a build step that
// merely mentions a host, or of another git source, is left as it is.
func (d Describer) Describe(err error) error {
	if err == nil || d.Context == nil {
		return err
	}
	msg := err.Error()
	ours := false
	for _, m := range remoteMarkers {
		ours = ours || strings.Contains(msg, m+d.Context.Remote()+":") || strings.Contains(msg, m+d.Context.Remote()+" ")
	}
	if !ours && !hasAny(msg, otherMarkers) {
		return err
	}
	cause, fix := d.explain(msg, ours)
	if cause == "" {
		return err
	}
	return &Error{Context: d.Context.String(), Cause: cause, Fix: fix, Err: err}
}

// explain is the cause and the fix for a failure's text, "" for one it
// does not know; ours says the text names the context's remote, which
// git's own words need. The checksum, the ref and the folder come first:
// their texts are BuildKit's own and say the most.
func (d Describer) explain(msg string, ours bool) (cause, fix string) {
	c := d.Context
	host := c.Host()
	if host == "" {
		host = "the server"
	}
	if m := checksum.FindStringSubmatch(msg); m != nil {
		return d.moved(m[1], lastNonEmpty(m[2:]))
	}
	if m := unknownRef.FindStringSubmatch(msg); m != nil && m[1] == c.Ref.Ref {
		return d.unknownRef(m[1])
	}
	if m := noSubdir.FindStringSubmatch(msg); m != nil && m[1] == c.Ref.SubDir {
		return fmt.Sprintf("the repository %s has no folder %s at %s", c.Remote(), m[1], c.Ref.Ref),
			"correct the folder after ':' (or subdir=): it is relative to the repository's root"
	}
	if !ours {
		return "", ""
	}
	if m := unknownCommit.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("the repository %s has no commit %s", c.Remote(), lastNonEmpty(m[1:])),
			"correct the commit, given in full; or pin a tag and its commit: ?ref=TAG&checksum=COMMIT"
	}
	if m := unknownHost.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("the host %s is not known (no DNS name resolves to it)", lastNonEmpty(m[1:])),
			"correct the host in the URL, or check the DNS and network of " + d.fetcher()
	}
	if noConnection.MatchString(msg) {
		return fmt.Sprintf("nothing answers at %s", host),
			"check the host and port in the URL, and that the git server is up and reachable from " + d.fetcher()
	}
	if credentials.MatchString(msg) {
		return d.refused(host)
	}
	if noRepository.MatchString(msg) {
		return fmt.Sprintf("%s has no repository %s (or does not serve it)", host, repoPath(c)),
			"correct the repository's path in the URL"
	}
	return "", ""
}

// moved is the sentence for a ref that no longer resolves to its pinned
// commit.
func (d Describer) moved(pinned, now string) (cause, fix string) {
	what := "the tag or branch " + d.Context.Ref.Ref
	if kind := RefKind(d.LockedRef); d.LockFile != "" && (kind == "tag" || kind == "branch") {
		what = "the " + kind + " " + RefName(d.LockedRef)
	}
	if now == "" {
		now = "another commit"
	}
	if d.LockFile != "" {
		return fmt.Sprintf("%s moved: %s pins commit %s, the repository now has %s", what, d.LockFile, pinned, now),
			"check what changed, then run 'jetbake lock' to pin the new commit"
	}
	return fmt.Sprintf("%s moved: the context's checksum pins commit %s, the repository now has %s", what, pinned, now),
		"check what changed, then set checksum=" + now + " in router.context"
}

// unknownRef is the sentence for a ref the repository does not have.
func (d Describer) unknownRef(ref string) (cause, fix string) {
	cause = fmt.Sprintf("the repository %s has no tag or branch %s", d.Context.Remote(), ref)
	if isHex(ref) && !gitutil.IsCommitSHA(ref) {
		return cause, "a commit must be given in full (40 hex digits); or name a tag: git ls-remote --tags " + d.Context.Remote() + " lists them"
	}
	return cause, "correct the ref after '#' (or ref=): git ls-remote --tags " + d.Context.Remote() + " lists the tags"
}

// refused is the sentence for a server that wants credentials: none were
// given, or it refused those given. Git hosts answer a repository that
// does not exist the same way, so as not to tell which exist.
//
// Its fixes name flags, --secret id=GIT_AUTH_TOKEN.<host>,env=VAR and
// --ssh default, though this package names no other: the failure comes in
// the middle of a build (BuildKit's git source, while the release solves)
// or of 'jetbake lock' (git ls-remote), where no command can reword it
// afterwards, and those flags are written as every BuildKit client takes
// them (docker buildx build, buildctl, jetbake build and lock): BuildKit's
// pre-defined git secrets, as
// https://docs.docker.com/build/building/secrets/#git-authentication-for-remote-contexts
// documents them.
func (d Describer) refused(host string) (cause, fix string) {
	id := "GIT_AUTH_TOKEN." + d.Context.Host()
	if d.Context.Host() == "" || strings.HasPrefix(d.Context.Ref.Remote, "ssh://") {
		return fmt.Sprintf("%s refused the SSH key (or no key was forwarded)", host),
			"forward a key that may read the repository: --ssh default (the ssh-agent of SSH_AUTH_SOCK)"
	}
	if len(d.Credentials) == 0 {
		return fmt.Sprintf("%s asks for credentials (the repository is private, or does not exist) and none were given", host),
			fmt.Sprintf("give a token that may read it: --secret id=%s,env=VAR, or set %s", id, TokenEnv)
	}
	return fmt.Sprintf("%s refused the credentials given (%s)", host, strings.Join(d.Credentials, ", ")),
		"check that the token is valid and may read the repository, and that the URL names the right repository"
}

func (d Describer) fetcher() string {
	if d.Fetcher != "" {
		return d.Fetcher
	}
	return "the BuildKit daemon"
}

// repoPath is the repository's path on its host.
func repoPath(c *Context) string {
	if u, err := gitutil.ParseURL(c.fetchURL()); err == nil && u.Path != "" {
		return u.Path
	}
	return c.Remote()
}

func hasAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func lastNonEmpty(ss []string) string {
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i] != "" {
			return ss[i]
		}
	}
	return ""
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}
