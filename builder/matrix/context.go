package matrix

import (
	"os"
	"path/filepath"
	"strings"
)

// IsGitContext reports whether a build context is a git repository URL
// (https://, ssh://, git://, git@host:, or github.com/...) rather than a
// local folder.
func IsGitContext(context string) bool {
	return strings.Contains(context, "://") || strings.HasPrefix(context, "git@") ||
		strings.HasPrefix(context, "github.com/")
}

// GitRef returns the ref a git context is pinned to: the part after '#' and
// before an optional ":subdir", e.g. "v1.8.0" for
// "https://github.com/huggingface/text-embeddings-inference.git#v1.8.0".
func GitRef(context string) string {
	_, fragment, _ := strings.Cut(context, "#")
	ref, _, _ := strings.Cut(fragment, ":")
	return ref
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

// checkContext checks that a git context is pinned to a tag or commit.
func checkContext(m *Matrix, errs *checker) {
	ctx := m.Router.Context
	if ctx == "" || !IsGitContext(ctx) {
		return
	}
	url, _, _ := strings.Cut(ctx, "#")
	ref := GitRef(ctx)
	example := "\"" + url + "#v" + m.Router.Version + "\""
	switch {
	case ref == "":
		errs.addString("router.context", ctx, "git context is not pinned: builds would take whatever the default branch holds",
			"append \"#<tag or commit>\", e.g. "+example)
	case isMovingRef(ref):
		errs.addString("router.context", ctx, "git context is pinned to the branch "+quote(ref)+", which moves",
			"pin a tag or a commit instead, e.g. "+example)
	}
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

// checkFilesExist checks that the local context folder and the Dockerfile exist.
func checkFilesExist(m *Matrix, errs *checker) {
	if ctx := m.Router.Context; ctx != "" && !IsGitContext(ctx) {
		p := m.LocalPath(ctx)
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			errs.addString("router.context", ctx, "local context folder "+p+" does not exist",
				"create it, correct the path (it is relative to the matrix file's folder), or use a pinned git URL")
		}
	}
	if df := m.Router.Dockerfile; df != "" {
		p := m.LocalPath(df)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			errs.addString("router.dockerfile", df, "Dockerfile "+p+" does not exist",
				"correct the path: it is relative to the matrix file's folder")
		}
	}
}
