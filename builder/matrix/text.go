package matrix

import (
	"fmt"
	"path"
	"sort"
	"unicode"
)

// MaxNameLength is the longest release name, router name, version and
// stage name: what a tag (128 characters, OCI distribution spec), a file
// name (255 bytes) and an OCI annotation can all carry, since a release
// name becomes the folder of its evidence and {release} in tags.
const MaxNameLength = 128

// controlErrors reports every string of the document, value or member
// name, that holds a control character (U+0000 to U+001F, U+007F to
// U+009F). An image's environment, command and labels cannot carry a NUL
// (the kernel ends the string there), and the others reach terminals and
// logs. It also returns the paths of those values, which the rules skip.
func controlErrors(doc any) ([]FieldError, []string) {
	var out []FieldError
	var bad []string
	var walk func(v any, p string)
	walk = func(v any, p string) {
		switch x := v.(type) {
		case string:
			if i, r, ok := firstControl(x); ok {
				out = append(out, FieldError{Path: p, Value: quote(x),
					Message: fmt.Sprintf("holds the control character U+%04X at byte %d, which an image's config, a terminal or a log cannot carry safely", r, i),
					Fix:     "remove it; write line breaks and tabs as spaces"})
				bad = append(bad, p)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				kp := keyPath(p, k)
				if i, r, ok := firstControl(k); ok {
					out = append(out, FieldError{Path: kp, Value: quote(k),
						Message: fmt.Sprintf("is a name with the control character U+%04X at byte %d", r, i), Fix: "rename it without it"})
					bad = append(bad, kp)
					continue
				}
				walk(x[k], kp)
			}
		case []any:
			for i, item := range x {
				walk(item, indexPath(p, i))
			}
		}
	}
	walk(doc, "$")
	return out, bad
}

// firstControl returns the byte offset and rune of the first control
// character of s.
func firstControl(s string) (int, rune, bool) {
	for i, r := range s {
		if unicode.IsControl(r) {
			return i, r, true
		}
	}
	return 0, 0, false
}

// checkOutput checks that router.output is a clean absolute path of a file:
// the builder copies the binary from exactly that path of the build stage,
// and a path with "." or ".." names another one than it seems to.
func checkOutput(m *Matrix, errs *checker) {
	out := m.Router.Output
	if out == "" || out[0] != '/' {
		return // the schema reports it
	}
	if path.Clean(out) != out || out == "/" {
		errs.addString("router.output", out, "is not a clean absolute path of a file: the builder copies the binary from exactly this path",
			`write it without ".", "..", "//" or a trailing "/", e.g. "/usr/local/bin/text-embeddings-router"`)
	}
}
