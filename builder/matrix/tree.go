package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// nodeKind is the JSON type of a node.
type nodeKind int

const (
	kindNull nodeKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// String names the kind as JSON Schema does.
func (k nodeKind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// article writes the kind with "a" or "an": "a string", "an array", "null".
func (k nodeKind) article() string {
	if k == kindNull {
		return "null"
	}
	if k == kindArray || k == kindObject {
		return "an " + k.String()
	}
	return "a " + k.String()
}

// maxDepth bounds nesting; a matrix is four levels deep.
const maxDepth = 32

// node is one JSON value with object members in document order, so that
// duplicate keys can be reported and errors come out in a stable order.
type node struct {
	kind nodeKind
	// text is a string's value, or the literal of a number or boolean.
	text string
	// keys and values are an object's members; values alone are an array's items.
	keys   []string
	values []*node
}

// member returns the first value of key in an object and whether it exists.
func (n *node) member(key string) (*node, bool) {
	for i, k := range n.keys {
		if k == key {
			return n.values[i], true
		}
	}
	return nil, false
}

// render writes the node as short JSON text for error messages.
func (n *node) render() string {
	switch n.kind {
	case kindNull:
		return "null"
	case kindString:
		return quote(n.text)
	case kindArray:
		return "[" + plural(len(n.values), "item") + "]"
	case kindObject:
		return "{" + plural(len(n.keys), "field") + "}"
	default:
		return n.text
	}
}

// decodeTree reads data, which json.Valid has already accepted, into a tree. It is a small scanner rather than
// json.Decoder.Token, which is several times slower.
func decodeTree(data []byte) (*node, *FieldError) {
	sc := scanner{data: data}
	root, err := sc.value(0)
	if err != nil {
		return nil, syntaxError(data, int64(sc.pos), err)
	}
	return root, nil
}

// syntaxError turns a decoding error into a FieldError with a line and column.
func syntaxError(data []byte, offset int64, err error) *FieldError {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		offset = syn.Offset
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input") {
		err = errors.New("unexpected end of the file")
		offset = int64(len(data))
	}
	offset = min(max(offset, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:offset], []byte{'\n'})
	col := int(offset) - bytes.LastIndexByte(data[:offset], '\n')
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return &FieldError{
		Path:    "$",
		Message: fmt.Sprintf("not valid JSON at line %d, column %d: %s", line, col, msg),
		Fix:     "correct the JSON syntax there (a missing comma or quote, or a trailing comma, is the usual cause)",
	}
}

// scanner reads valid JSON text into nodes.
type scanner struct {
	data []byte
	pos  int
	// slab holds nodes not yet handed out, allocated in chunks.
	slab []node
	// strings holds every plain string read so far, so that values repeated
	// across releases share one copy.
	strings map[string]string
}

// newNode hands out a node from the slab.
func (s *scanner) newNode(kind nodeKind, text string) *node {
	if len(s.slab) == 0 {
		s.slab = make([]node, 256)
	}
	n := &s.slab[0]
	s.slab = s.slab[1:]
	n.kind, n.text = kind, text
	return n
}

// skipSpace moves past white space and returns the next byte, or 0 at the end.
func (s *scanner) skipSpace() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// value reads the next value.
func (s *scanner) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nesting deeper than %d levels", maxDepth)
	}
	switch c := s.skipSpace(); c {
	case 0:
		return nil, io.ErrUnexpectedEOF
	case '{':
		s.pos++
		return s.object(depth)
	case '[':
		s.pos++
		return s.array(depth)
	case '"':
		text, err := s.str()
		return s.newNode(kindString, text), err
	default:
		return s.literal()
	}
}

// object reads an object's members after its opening brace.
func (s *scanner) object(depth int) (*node, error) {
	n := s.newNode(kindObject, "")
	for {
		switch s.skipSpace() {
		case '}':
			s.pos++
			return n, nil
		case ',':
			s.pos++
			continue
		case '"':
		default:
			return nil, fmt.Errorf("invalid character in object")
		}
		key, err := s.str()
		if err != nil {
			return nil, err
		}
		if s.skipSpace() != ':' {
			return nil, fmt.Errorf("missing ':' after object key")
		}
		s.pos++
		v, err := s.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.values = append(n.values, v)
	}
}

// array reads an array's items after its opening bracket.
func (s *scanner) array(depth int) (*node, error) {
	n := s.newNode(kindArray, "")
	for {
		switch s.skipSpace() {
		case ']':
			s.pos++
			return n, nil
		case ',':
			s.pos++
			continue
		case 0:
			return nil, io.ErrUnexpectedEOF
		}
		v, err := s.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.values = append(n.values, v)
	}
}

// str reads a string starting at its opening quote.
func (s *scanner) str() (string, error) {
	start := s.pos
	plain := true
	for i := start + 1; i < len(s.data); i++ {
		switch c := s.data[i]; {
		case c == '\\':
			plain = false
			i++
		case c == '"':
			s.pos = i + 1
			raw := s.data[start+1 : i]
			if plain && utf8.Valid(raw) {
				return s.intern(raw), nil
			}
			var text string
			if err := json.Unmarshal(s.data[start:i+1], &text); err != nil {
				return "", err
			}
			return text, nil
		case c < 0x20 || c >= utf8.RuneSelf:
			plain = plain && c >= utf8.RuneSelf
		}
	}
	s.pos = len(s.data)
	return "", io.ErrUnexpectedEOF
}

// intern returns raw as a string, sharing the copy of an equal string read
// before.
func (s *scanner) intern(raw []byte) string {
	if text, ok := s.strings[string(raw)]; ok {
		return text
	}
	if s.strings == nil {
		s.strings = make(map[string]string)
	}
	text := string(raw)
	s.strings[text] = text
	return text
}

// literal reads a number, true, false or null.
func (s *scanner) literal() (*node, error) {
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		s.pos++
	}
	text := string(s.data[start:s.pos])
	switch {
	case text == "null":
		return s.newNode(kindNull, ""), nil
	case text == "true" || text == "false":
		return s.newNode(kindBool, text), nil
	case text != "" && (text[0] == '-' || ('0' <= text[0] && text[0] <= '9')):
		return s.newNode(kindNumber, text), nil
	}
	s.pos = start
	return nil, fmt.Errorf("invalid value %q", text)
}
