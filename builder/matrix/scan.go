package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/jetbake/jetbake/computecap"
)

// maxDepth bounds nesting; a matrix is four levels deep.
const maxDepth = 32

// utf8BOM is the byte order mark some Windows editors put before UTF-8 text.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// positions maps the JSON path of every value in a document, written as
// FieldError paths are ("releases[2].targets[1]"), to the byte offset where
// the value starts.
type positions map[string]int64

// scanDocument reads the raw text once with jsontext, which rejects
// duplicate object names and invalid UTF-8 as the JSON RFCs allow, and
// records where every value starts so that errors can name a line and a
// column. It returns the first syntax problem as a FieldError.
func scanDocument(data []byte) (positions, *FieldError) {
	if bytes.HasPrefix(data, utf8BOM) {
		return nil, &FieldError{Path: "$", Line: 1, Column: 1,
			Message: "the file starts with a UTF-8 byte order mark (BOM), which JSON does not allow",
			Fix:     "save the file as UTF-8 without a BOM"}
	}
	if bad := firstInvalidUTF8(data); bad >= 0 {
		line, col := computecap.LineColumn(data, bad)
		return nil, &FieldError{Path: "$", Line: line, Column: col,
			Message: fmt.Sprintf("not valid UTF-8 at byte offset %d", bad),
			Fix:     "save the file as UTF-8"}
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	pos := positions{}
	var w walker
	for {
		end := dec.InputOffset()
		tok, err := dec.ReadToken()
		if err == io.EOF {
			if len(pos) == 0 {
				return nil, syntaxError(data, int64(len(data)), io.ErrUnexpectedEOF)
			}
			return pos, nil
		}
		if err != nil {
			return nil, w.syntaxError(data, err)
		}
		start := valueStart(data, end)
		if len(w.frames) == 0 && len(pos) > 0 {
			return nil, syntaxError(data, start, fmt.Errorf("invalid character %q after top-level value", data[start]))
		}
		if path, ok := w.step(tok.Kind(), tok); ok {
			pos[path] = start
		}
		if len(w.frames) > maxDepth {
			return nil, syntaxError(data, start, fmt.Errorf("nesting deeper than %d levels", maxDepth))
		}
	}
}

// frame is one open object or array while a document is walked.
type frame struct {
	path  string
	array bool
	// index is the next item's index in an array.
	index int
	// name is the member name just read in an object; wantName is true
	// while the next string is a member name.
	name     string
	wantName bool
}

// walker follows the path of the current value through a token stream.
type walker struct {
	frames []frame
}

// step takes one token and returns the path of the value it starts, if it
// starts one (member names and closing brackets do not).
func (w *walker) step(kind jsontext.Kind, tok jsontext.Token) (string, bool) {
	if kind == '}' || kind == ']' {
		w.frames = w.frames[:len(w.frames)-1]
		w.done()
		return "", false
	}
	if n := len(w.frames); n > 0 && w.frames[n-1].wantName {
		w.frames[n-1].name, w.frames[n-1].wantName = tok.String(), false
		return "", false
	}
	path := w.path()
	switch kind {
	case '{':
		w.frames = append(w.frames, frame{path: path, wantName: true})
	case '[':
		w.frames = append(w.frames, frame{path: path, array: true})
	default:
		w.done()
	}
	return path, true
}

// path is the path of the value about to be read.
func (w *walker) path() string {
	if len(w.frames) == 0 {
		return "$"
	}
	f := &w.frames[len(w.frames)-1]
	if f.array {
		return indexPath(f.path, f.index)
	}
	return keyPath(f.path, f.name)
}

// done records that a value of the innermost container was read.
func (w *walker) done() {
	if len(w.frames) == 0 {
		return
	}
	f := &w.frames[len(w.frames)-1]
	if f.array {
		f.index++
	} else {
		f.wantName = true
	}
}

// syntaxError turns a jsontext error into a FieldError; a repeated member
// name is reported at the member's path.
func (w *walker) syntaxError(data []byte, err error) *FieldError {
	var serr *jsontext.SyntacticError
	if !errors.As(err, &serr) {
		return syntaxError(data, 0, err)
	}
	if errors.Is(err, jsontext.ErrDuplicateName) && len(w.frames) > 0 {
		name := serr.JSONPointer.LastToken()
		line, col := computecap.LineColumn(data, serr.ByteOffset)
		return &FieldError{Path: keyPath(w.frames[len(w.frames)-1].path, name), Line: line, Column: col,
			Message: "duplicate field: JSON readers keep only one of them", Fix: "remove one"}
	}
	return syntaxError(data, serr.ByteOffset, serr.Err)
}

// syntaxError describes a problem in the JSON text at byte offset.
func syntaxError(data []byte, offset int64, err error) *FieldError {
	line, col := computecap.LineColumn(data, offset)
	msg := err.Error()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "unexpected end of the file"
	}
	return &FieldError{Path: "$", Line: line, Column: col,
		Message: fmt.Sprintf("not valid JSON at line %d, column %d: %s", line, col, msg),
		Fix:     "correct the JSON at that place; an editor that knows matrix.schema.json shows it"}
}

// firstInvalidUTF8 returns the offset of the first byte that is not valid
// UTF-8, or -1.
func firstInvalidUTF8(data []byte) int64 {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return int64(i)
		}
		i += size
	}
	return -1
}

// valueStart skips the white space and separators after offset end, where
// the previous token ended, to where the next token starts.
func valueStart(data []byte, end int64) int64 {
	for end < int64(len(data)) {
		switch data[end] {
		case ' ', '\t', '\r', '\n', ',', ':':
			end++
		default:
			return end
		}
	}
	return end
}
