package codemap

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// OwnLines counts the lines of a package's own files: the .go files
// directly in dir, its tests left out, as `wc -l` counts them.
func OwnLines(dir string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		n += bytes.Count(data, []byte("\n"))
	}
	return n, nil
}

// CheckSize is the sentence that says package pkg's own files hold lines,
// more than limit, and the fix; "" when they hold limit or fewer.
func CheckSize(pkg string, lines, limit int) string {
	if lines <= limit {
		return ""
	}
	return fmt.Sprintf("%s's own non-test .go files hold %d lines, more than %d: move a whole job into a package beside it "+
		"(under %s/, with a name that says its job) and give that package its row in docs/code-map.md", pkg, lines, limit, pkg)
}
