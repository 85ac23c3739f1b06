package matrix

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jetbake/jetbake/computecap"
)

// FieldError is one problem in a matrix: where it is, what was found there,
// what is wrong with it and how to fix it.
type FieldError struct {
	// File is the file the problem is in when it is not the matrix's
	// (the facts file a matrix names); "" for the matrix.
	File string `json:"file,omitempty"`
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
	// Line and Column locate the value in the file (1-based; the column
	// counts characters), or are 0 when the problem has no single place.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
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

// Error writes one line per problem, each prefixed with the file name and
// the line and column when they are known, as compilers do:
// "matrix.json:42:19: releases[2].targets[1]: ...".
func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteByte('\n')
		}
		if file := fe.in(e.File); file != "" {
			b.WriteString(file)
			if fe.Line > 0 {
				b.WriteString(":" + strconv.Itoa(fe.Line) + ":" + strconv.Itoa(fe.Column))
			}
			b.WriteString(": ")
		}
		b.WriteString(fe.Error())
	}
	return b.String()
}

// in is the file the problem is in: its own, else the matrix's.
func (e FieldError) in(matrixFile string) string {
	if e.File != "" {
		return e.File
	}
	return matrixFile
}

// checker collects field errors while a matrix is checked, and keeps the
// JetPack facts for the length of one check.
type checker struct {
	errs []FieldError
	// noKind is set when the matrix has neither router nor app.
	noKind bool
	// jetpacks is the table's JetPack releases, read once.
	jetpacks []computecap.JetPackRelease
	// table is the table of Jetson facts the rules read.
	table *computecap.Table
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

// quote writes s as a quoted string, control characters escaped, cut
// with its length stated when it is long (computecap.QuoteShort).
func quote(s string) string { return computecap.QuoteShort(s) }

// cutText cuts JSON text for a message at computecap.QuoteLimit bytes, on
// a character boundary, stating its length.
func cutText(s string) string {
	if len(s) <= computecap.QuoteLimit {
		return s
	}
	cut := computecap.QuoteLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)) + " bytes)"
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

// GitHubAnnotations writes the problems as GitHub Actions workflow commands,
// one "::error file=F,line=L,col=C,title=PATH::MESSAGE" line each, so that a
// workflow run marks the lines of the matrix file.
func (e *ValidationError) GitHubAnnotations() string {
	return annotations("error", e.File, e.Errors)
}

// WarningAnnotations writes a matrix's warnings (Matrix.Warnings) as
// GitHub Actions "::warning" workflow commands, one line each.
func WarningAnnotations(file string, warnings []FieldError) string {
	return annotations("warning", file, warnings)
}

// annotations writes one "::KIND file=F,line=L,col=C,title=PATH::MESSAGE"
// line per problem.
func annotations(kind, file string, errs []FieldError) string {
	var b strings.Builder
	for _, fe := range errs {
		b.WriteString("::" + kind + " file=" + escapeProperty(fe.in(file)))
		if fe.Line > 0 {
			b.WriteString(",line=" + strconv.Itoa(fe.Line) + ",col=" + strconv.Itoa(fe.Column))
		}
		b.WriteString(",title=" + escapeProperty(fe.Path) + "::" + escapeData(fe.Error()) + "\n")
	}
	return b.String()
}

// WarningLines writes a matrix's warnings one per line, as compilers do:
// "matrix.json:17:19: warning: image.repository: ...".
func WarningLines(file string, warnings []FieldError) string {
	var b strings.Builder
	for _, fe := range warnings {
		b.WriteString(fe.in(file))
		if fe.Line > 0 {
			b.WriteString(":" + strconv.Itoa(fe.Line) + ":" + strconv.Itoa(fe.Column))
		}
		b.WriteString(": warning: " + fe.Error() + "\n")
	}
	return b.String()
}

// escapeData escapes a workflow command's message as the Actions runner
// reads it back.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
