package matrix

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/dfgitutil"
	"github.com/moby/buildkit/util/urlutil"
)

// ParseGitContext parses a build context the way BuildKit's Dockerfile
// frontend does (dfgitutil.ParseGitRef): "https://host/repo.git#ref:dir",
// "git@host:repo.git#ref", "ssh://", "git://", "github.com/org/repo#ref",
// and the query form "https://host/repo.git?ref=v1&subdir=dir". It returns
// false for anything BuildKit would read as a local folder.
func ParseGitContext(context string) (*dfgitutil.GitRef, bool) {
	ref, isGit, err := dfgitutil.ParseGitRef(context)
	if err != nil || !isGit || ref == nil {
		return nil, false
	}
	return ref, true
}

// IsGitContext reports whether a build context is a git repository rather
// than a local folder, by ParseGitContext.
func IsGitContext(context string) bool {
	_, ok := ParseGitContext(context)
	return ok
}

// GitRef returns the ref a git context is pinned to, e.g. "v1.8.0" for
// "https://github.com/huggingface/text-embeddings-inference.git#v1.8.0" or
// "...text-embeddings-inference.git?ref=v1.8.0", or the commit of a
// "?checksum=" pin; "" when it is not pinned or not a git context.
func GitRef(context string) string {
	ref, ok := ParseGitContext(context)
	if !ok {
		return ""
	}
	if ref.Ref == "" {
		return ref.Checksum
	}
	return ref.Ref
}

// GitCommit returns the commit a git context is pinned to: its
// "checksum=" (or "commit=") value, or a ref that is a full commit hash;
// "" for a tag or branch alone, or a local folder. It is what the router's
// build reports as its commit (TEI's GIT_SHA).
func GitCommit(context string) string {
	ref, ok := ParseGitContext(context)
	if !ok {
		return ""
	}
	for _, c := range []string{ref.Checksum, ref.Ref} {
		if isCommit(c) {
			return strings.ToLower(c)
		}
	}
	return ""
}

// isCommit reports whether s is a full SHA-1 or SHA-256 commit hash.
func isCommit(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// LocalPath resolves a path of the matrix against the matrix file's folder,
// or against the working directory when the matrix was not loaded from a
// file. Absolute paths are returned cleaned.
func (m *Matrix) LocalPath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if m.Dir == "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	return filepath.Join(m.Dir, p)
}

// checkContext checks that a git context is pinned to a tag, a commit, or
// a ref with its commit (?ref=BRANCH&checksum=COMMIT), and holds no
// password: the matrix, the logs and the provenance would all show it.
func checkContext(m *Matrix, errs *checker) {
	kind, ctx, _ := m.source()
	if ctx == "" || !IsGitContext(ctx) {
		return
	}
	field := kind + ".context"
	parsed, _ := ParseGitContext(ctx)
	ref := GitRef(ctx)
	example := "\"" + urlutil.RedactCredentials(parsed.Remote) + "#v" + m.Version() + "\""
	switch {
	case hasPassword(parsed.Remote):
		// The fix names build's and lock's flag, though this package names
		// no other: it is how every BuildKit client gives BuildKit's
		// pre-defined git secret (see gitcontext's refused), and the
		// problem is in the matrix file, whose ValidationError holds it
		// among the others, with its line and column.
		errs.addString(field, urlutil.RedactCredentials(ctx), "git context holds a password or token in its URL, which the matrix, the logs and the image's provenance would show",
			"remove it from the URL and give it to the build as a secret: --secret id=GIT_AUTH_TOKEN.<host>,env=VAR (or JETBAKE_GIT_AUTH_TOKEN)")
	case ref == "":
		errs.addString(field, ctx, "git context is not pinned: builds would take whatever the default branch holds",
			"append \"#<tag or commit>\", e.g. "+example)
	case parsed.Checksum != "" && !isHexPrefix(parsed.Checksum):
		errs.addString(field, ctx, "checksum "+quote(parsed.Checksum)+" is not a commit",
			"give the commit's hex digits, e.g. checksum=$(git ls-remote REMOTE REF)")
	case isMovingRef(ref) && parsed.Checksum == "":
		errs.addString(field, ctx, "git context is pinned to the branch "+quote(ref)+", which moves",
			"pin a tag or a commit instead, e.g. "+example+", or the branch with its commit: ?ref="+ref+"&checksum=COMMIT")
	}
}

// hasPassword reports whether a git remote's URL holds a password.
func hasPassword(remote string) bool {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

// isHexPrefix reports whether s can be (a prefix of) a commit: 4 to 64 hex digits.
func isHexPrefix(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	return strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

// isMovingRef reports whether a ref names a branch rather than a fixed
// point: HEAD, a well-known branch name, or refs/heads/....
func isMovingRef(ref string) bool {
	switch ref {
	case "HEAD", "main", "master", "develop", "trunk":
		return true
	}
	return strings.HasPrefix(ref, "refs/heads/")
}

// checkFilesExist checks that the local context folder and the Dockerfile
// exist, and that they lie inside the matrix's repository (Inside).
// grant words the fix's grant (see WithGrantReadFix).
func checkFilesExist(m *Matrix, errs *checker, grant func(string) string) {
	kind, ctx, df := m.source()
	if ctx != "" && !IsGitContext(ctx) {
		p := m.LocalPath(ctx)
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			errs.addString(kind+".context", ctx, "local context folder "+p+" does not exist",
				"create it, correct the path (it is relative to the matrix file's folder), or use a pinned git URL")
		} else if out := m.Inside(ctx); out != "" {
			errs.addString(kind+".context", ctx, "local context folder "+out, allowFix(resolveExisting(p), grant))
		}
	}
	if df != "" {
		p := m.LocalPath(df)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			errs.addString(kind+".dockerfile", df, "Dockerfile "+p+" does not exist",
				"correct the path: it is relative to the matrix file's folder")
		} else if !st.Mode().IsRegular() {
			errs.addString(kind+".dockerfile", df, "Dockerfile "+p+" is not a regular file (a pipe, a device or a socket)",
				"name the Dockerfile itself")
		} else if out := m.Inside(df); out != "" {
			errs.addString(kind+".dockerfile", df, "Dockerfile "+out, allowFix(resolveExisting(p), grant))
		} else {
			checkStages(m, p, errs)
		}
	}
	checkRecipeFiles(m, errs, grant)
}
