package matrix

import (
	"regexp"
	"strconv"
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// FieldError is one problem in a matrix: where it is, what was found there,
// what is wrong with it and how to fix it.
type FieldError struct {
	// Path is the JSON path of the field, such as "releases[2].targets[1]";
	// "$" stands for the whole document.
	Path string `json:"path"`
	// Value is the offending value as JSON text (a string keeps its quotes,
	// long values are shortened), or empty when the field is missing.
	Value string `json:"value,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
	// Fix says what to change, or is empty when the message says it already.
	Fix string `json:"fix,omitempty"`
}

// Error writes the problem on one line:
// `releases[2].targets[1]: "11.0": message; fix: fix`.
func (e FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	b.WriteString(": ")
	if e.Value != "" {
		b.WriteString(e.Value)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Fix != "" {
		b.WriteString("; fix: ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// ValidationError lists every problem found in a matrix, in document order.
type ValidationError struct {
	// File is the matrix file's path as given to Load, or empty for Parse.
	File string `json:"file,omitempty"`
	// Errors are the problems, at least one.
	Errors []FieldError `json:"errors"`
}

// Error writes one line per problem, each prefixed with the file name when
// it is known.
func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.File != "" {
			b.WriteString(e.File)
			b.WriteString(": ")
		}
		b.WriteString(fe.Error())
	}
	return b.String()
}

// checker collects field errors while a matrix is checked, and remembers
// pattern matches and JetPack facts for the length of one check: a large
// matrix repeats the same versions and base images many times.
type checker struct {
	errs []FieldError
	// matches remembers pattern matches by pattern and value.
	matches map[matchKey]bool
	// jetpacks is the table's JetPack releases, read once.
	jetpacks []computecap.JetPackRelease
	// table is the table of Jetson facts the rules read.
	table *computecap.Table
}

// matchKey is a pattern and a value it was matched against.
type matchKey struct {
	re    *regexp.Regexp
	value string
}

// match reports whether re matches s, remembering the answer.
func (l *checker) match(re *regexp.Regexp, s string) bool {
	k := matchKey{re, s}
	if ok, seen := l.matches[k]; seen {
		return ok
	}
	if l.matches == nil {
		l.matches = make(map[matchKey]bool)
	}
	ok := re.MatchString(s)
	l.matches[k] = ok
	return ok
}

// jetPackReleases returns the table's JetPack releases, read once per check.
func (l *checker) jetPackReleases() []computecap.JetPackRelease {
	if l.jetpacks == nil {
		l.jetpacks = l.facts().Releases()
	}
	return l.jetpacks
}

// facts is the table of Jetson facts of this check: the one WithTable gave,
// else the shipped one.
func (l *checker) facts() *computecap.Table {
	if l.table == nil {
		l.table = computecap.DefaultTable()
	}
	return l.table
}

// add records a problem. value is the offending value as JSON text.
func (l *checker) add(path, value, message, fix string) {
	l.errs = append(l.errs, FieldError{Path: path, Value: value, Message: message, Fix: fix})
}

// addString records a problem with a string value, quoting it.
func (l *checker) addString(path, value, message, fix string) {
	l.add(path, quote(value), message, fix)
}

// quote writes s as a JSON string, shortened when it is long.
func quote(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

// joinPath appends a field name to a JSON path.
func joinPath(path, field string) string {
	if path == "" || path == "$" {
		return field
	}
	return path + "." + field
}

// indexPath appends an array index to a JSON path.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// keyPath appends a map key to a JSON path, quoting keys that are not plain
// names.
func keyPath(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r == '.' || r == '/' || r == '$' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			plain = false
			break
		}
	}
	if plain {
		return joinPath(path, key)
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// covers reports whether a problem at path is explained by a problem at bad:
// the same field or one inside it.
func covers(bad, path string) bool {
	if !strings.HasPrefix(path, bad) {
		return false
	}
	rest := path[len(bad):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}
