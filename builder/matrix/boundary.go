package matrix

import (
	"os"
	"path/filepath"
	"strings"
)

// A matrix comes in pull requests: its local paths must not point the build
// at the files of the machine that runs it (~/.docker/config.json, a CI
// token). As buildx bake does with its filesystem entitlements
// (https://docs.docker.com/reference/cli/docker/buildx/bake/#allow), the
// router's local context and Dockerfile, symbolic links followed, must lie
// inside the matrix's repository, unless the user grants more with
// WithAllowRead.

// WithAllowRead grants read access to folders outside the matrix's
// repository, as `docker buildx bake --allow fs.read=PATH` does: the local
// context and the Dockerfile may lie under any of paths. "/" grants every
// path.
func WithAllowRead(paths ...string) Option {
	return func(o *options) { o.allowRead = append(o.allowRead, paths...) }
}

// RepositoryRoot returns the folder a matrix in dir may read from: the top
// level of the git work tree dir is in (the nearest folder above it, or dir
// itself, holding ".git"), else dir. Symbolic links in dir are resolved.
func RepositoryRoot(dir string) string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = filepath.Clean(dir)
	}
	for d := real; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return real
		}
	}
}

// Inside checks that the local path p of the matrix (resolved with
// LocalPath), its symbolic links followed, lies in the matrix's
// repository or in a folder granted with WithAllowRead. It returns "" when
// it does, and otherwise the sentence that says where it leads; a path
// that does not exist yet is judged by the folders that do.
func (m *Matrix) Inside(p string) string {
	if m.Root == "" {
		return ""
	}
	p = m.LocalPath(p)
	real := resolveExisting(p)
	for _, allowed := range append([]string{m.Root}, m.allowRead...) {
		if within(real, allowed) {
			return ""
		}
	}
	return outsideSentence(p, real, m.Root)
}

// LeavesRepository checks a file jetbake reads beside the matrix in dir
// by default (matrix.lock.json): "" when its links stay in the matrix's
// repository, else "leads to REAL, outside the matrix's repository ROOT".
func LeavesRepository(dir, p string) string {
	root := RepositoryRoot(dir)
	if real := resolveExisting(p); !within(real, root) {
		return "leads to " + real + ", outside the matrix's repository " + root
	}
	return ""
}

// outsideSentence says that p, which resolves to real, is outside root.
func outsideSentence(p, real, root string) string {
	where := p
	if real != p {
		where = p + " (which leads to " + real + ")"
	}
	return where + " is outside the matrix's repository " + root
}

// WithGrantReadFix words, for a command, how to grant read access to a
// local path outside the matrix's repository, part of the fix Load offers
// for it: grant gets the path and returns, say, "grant read access with
// --allow fs.read=PATH". The default names WithAllowRead.
func WithGrantReadFix(grant func(path string) string) Option {
	return func(o *options) { o.grantRead = grant }
}

// allowFix is the fix of a path p outside the repository; grant words
// how to grant it, nil for WithAllowRead.
func allowFix(p string, grant func(string) string) string {
	how := "grant read access to " + p + " with WithAllowRead"
	if grant != nil {
		how = grant(p)
	}
	return "move it into the repository, or " + how + "; a matrix from a pull request must not read this machine's files"
}

// resolveExisting resolves the symbolic links of the longest part of p
// that exists, and appends the rest.
func resolveExisting(p string) string {
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(d) == d {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveAllowed resolves the granted folders as the paths they are
// compared with are.
func resolveAllowed(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		out = append(out, resolveExisting(abs))
	}
	return out
}
