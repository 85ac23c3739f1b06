package ci

import (
	"io"
	"strings"

	"github.com/rhysd/actionlint"
)

// Lint runs actionlint on a workflow's content as if it were at path (such
// as .github/workflows/ci.yml) inside the repository at root, as GitHub
// would read it, and returns its errors. The end-to-end tests lint the
// files `jetbake init --gate` writes in a repository of their own with it.
func Lint(root, path string, content []byte) ([]*actionlint.Error, error) {
	project, err := actionlint.NewProject(root)
	if err != nil {
		return nil, err
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		return nil, err
	}
	return l.Lint(path, content, project)
}

// Messages writes actionlint's errors one a line.
func Messages(errs []*actionlint.Error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}
