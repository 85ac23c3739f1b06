package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
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
//
// The path of each value is jsontext's StackPointer. jsontext is
// github.com/go-json-experiment/json's: the standard library's
// encoding/json/jsontext is the same package, but Go 1.26 (go.mod) builds it
// only under GOEXPERIMENT=jsonv2.
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
	for {
		end, depth := dec.InputOffset(), dec.StackDepth()
		tok, err := dec.ReadToken()
		if err == io.EOF {
			if len(pos) == 0 {
				return nil, syntaxError(data, int64(len(data)), io.ErrUnexpectedEOF)
			}
			return pos, nil
		}
		if err != nil {
			return nil, decodeError(data, dec, err)
		}
		start := valueStart(data, end)
		if depth == 0 && len(pos) > 0 {
			return nil, syntaxError(data, start, fmt.Errorf("invalid character %q after top-level value", data[start]))
		}
		if startsValue(dec, tok.Kind()) {
			pos[fieldPath(dec, dec.StackPointer())] = start
		}
		if dec.StackDepth() > maxDepth {
			return nil, syntaxError(data, start, fmt.Errorf("nesting deeper than %d levels", maxDepth))
		}
	}
}

// startsValue reports whether the token of kind just read starts a value:
// closing brackets do not, nor does a member name (a string that leaves
// its object with an odd count of names and values).
func startsValue(dec *jsontext.Decoder, kind jsontext.Kind) bool {
	switch kind {
	case '}', ']':
		return false
	case '"':
		k, n := dec.StackIndex(dec.StackDepth())
		return k != '{' || n%2 == 0
	}
	return true
}

// fieldPath writes ptr, a JSON Pointer into the value dec is reading, as
// FieldError paths are written ("releases[2].targets[1]"). A pointer token
// does not say whether it names a member or an index ("/2"); the kind of
// dec's stack level it stands for does.
func fieldPath(dec *jsontext.Decoder, ptr jsontext.Pointer) string {
	path, level := "$", 1
	for tok := range ptr.Tokens() {
		if kind, _ := dec.StackIndex(level); kind == '[' {
			i, _ := strconv.Atoi(tok)
			path = indexPath(path, i)
		} else {
			path = keyPath(path, tok)
		}
		level++
	}
	return path
}

// decodeError turns a jsontext error into a FieldError; a repeated member
// name is reported at the member's path.
func decodeError(data []byte, dec *jsontext.Decoder, err error) *FieldError {
	var serr *jsontext.SyntacticError
	if !errors.As(err, &serr) {
		return syntaxError(data, 0, err)
	}
	if errors.Is(err, jsontext.ErrDuplicateName) {
		line, col := computecap.LineColumn(data, serr.ByteOffset)
		return &FieldError{Path: fieldPath(dec, serr.JSONPointer), Line: line, Column: col,
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
