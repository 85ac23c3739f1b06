package imagespec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// Error is a problem of an image description, in the shape of jetbake's
// matrix errors: "LINE:COLUMN: FIELD: VALUE: message; fix: fix". The
// package keeps its own small copy of that shape because the entrypoint
// may import only the standard library.
type Error struct {
	// File names the description, such as Path; "" when not known.
	File string
	// Line and Column locate the value (1-based, the column in
	// characters); 0 when unknown.
	Line, Column int
	// Field is the JSON path, such as "targets[1].path"; "$" for the whole.
	Field string
	// Value is the offending value as JSON text, cut when long; "" when
	// the field is missing.
	Value string
	// Message says what is wrong, Fix what to do.
	Message, Fix string
}

// Error writes the problem on one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if e.File != "" {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Field + ": ")
	if e.Value != "" {
		b.WriteString(e.Value + ": ")
	}
	b.WriteString(e.Message)
	if e.Fix != "" {
		b.WriteString("; fix: " + e.Fix)
	}
	return b.String()
}

// Place sets the line and column of the error's field in data, the
// description it was found in, when they are not set.
func (e *Error) Place(data []byte) {
	if e.Line == 0 {
		e.Line, e.Column = locate(data, e.Field)
	}
}

// decodeError turns an encoding/json error into an *Error at its place.
func decodeError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	e := &Error{Field: "$", Message: "is not valid JSON", Fix: rebuildFix}
	switch {
	case errors.As(err, &syn):
		e.Line, e.Column = computecap.LineColumn(data, syn.Offset)
		e.Message = "is not valid JSON: " + syn.Error()
		if syn.Offset >= int64(len(data)) {
			e.Message = "is not valid JSON: the file ends early"
		}
	case errors.As(err, &typ):
		e.Line, e.Column = computecap.LineColumn(data, typ.Offset)
		if typ.Field != "" {
			e.Field = typ.Field
			if line, col := locate(data, e.Field); line > 0 {
				e.Line, e.Column = line, col
			}
		}
		e.Message = "must be " + typ.Type.Kind().String() + ", not " + typ.Value
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.Line, e.Column = computecap.LineColumn(data, int64(len(data)))
		e.Message = "is not valid JSON: the file ends early"
	default:
		e.Message = "is not valid JSON: " + err.Error()
	}
	return e
}

// locate finds where the value at field (a path as Error writes it)
// starts in data, as a line and column; 0, 0 when it is not there. It walks
// the document only when a problem is reported, never on the start's path.
func locate(data []byte, field string) (line, col int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []pathFrame
	for {
		start := valueStart(data, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return 0, 0
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if n := len(stack); n > 0 && !stack[n-1].array && !stack[n-1].haveKey {
			stack[n-1].key, stack[n-1].haveKey = tok.(string), true
			continue
		}
		p := currentPath(stack)
		if p == field {
			return computecap.LineColumn(data, start)
		}
		if n := len(stack); n > 0 {
			stack[n-1].next()
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, pathFrame{path: p, array: d == '['})
		}
	}
}

// pathFrame is one open object or array while locate walks a document.
type pathFrame struct {
	path    string
	array   bool
	index   int
	key     string
	haveKey bool
}

// next records that the frame's current value was read.
func (f *pathFrame) next() {
	if f.array {
		f.index++
	}
	f.haveKey = false
}

// currentPath is the path of the value about to be read.
func currentPath(stack []pathFrame) string {
	if len(stack) == 0 {
		return "$"
	}
	f := stack[len(stack)-1]
	prefix := f.path + "."
	if f.path == "$" {
		prefix = ""
	}
	if f.array {
		return f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	return prefix + f.key
}

// valueStart skips white space and separators from offset to the next token.
func valueStart(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}
