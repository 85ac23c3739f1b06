package matrix

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/jetbake/jetbake/computecap"
)

// Document is a JSON file other than the matrix (the lock file, evidence,
// build metadata, the builders file) read with the matrix's reader, so
// that its problems have the matrix's shape: the file, the line and
// column, the JSON path, the value and the fix.
type Document struct {
	file string
	data []byte
	pos  positions
	fix  string
	// prefix is the path of the decoded value in data: "$", or "facts"
	// for a member decoded on its own.
	prefix string
}

// FileError is a problem of a JSON file other than the matrix, from
// DecodeFile or Document.Problem: input a command cannot use (the CLI
// exits 2). It is a *ValidationError too (errors.As).
type FileError struct {
	*ValidationError
}

// Unwrap returns the *ValidationError.
func (e *FileError) Unwrap() error { return e.ValidationError }

// BadInput marks the error as input a command cannot use.
func (e *FileError) BadInput() bool { return true }

// DecodeOption changes how DecodeFile reads a file.
type DecodeOption func(*decodeOptions)

type decodeOptions struct {
	keepUnknown bool
}

// IgnoreUnknownFields lets members v does not have pass, for a file that
// other tools write into too (the build metadata holds bake's keys).
func IgnoreUnknownFields() DecodeOption { return func(o *decodeOptions) { o.keepUnknown = true } }

// DecodeFile decodes data, the content of file, into v: one JSON object
// with no duplicate member, no member v does not have and every value of
// the type v wants. A problem is a *ValidationError of one FieldError whose
// fix is fix (such as "run 'jetbake lock' to write it anew") unless a
// better one is known, wrapped in a *FileError. The Document places the problems the caller finds
// in the values afterwards (Problem).
func DecodeFile(file string, data []byte, v any, fix string, opts ...DecodeOption) (*Document, error) {
	var o decodeOptions
	for _, opt := range opts {
		opt(&o)
	}
	pos, syntax := scanDocument(data)
	d := &Document{file: file, data: data, pos: pos, fix: fix}
	if syntax != nil {
		if syntax.Message != "" && strings.HasPrefix(syntax.Fix, "correct the JSON") {
			syntax.Fix = "correct the JSON at that place, or " + fix
		}
		return d, &FileError{&ValidationError{File: file, Errors: []FieldError{*syntax}}}
	}
	err := json.Unmarshal(data, v, json.RejectUnknownMembers(!o.keepUnknown))
	var serr *json.SemanticError
	switch {
	case err == nil:
		return d, nil
	case errors.As(err, &serr):
		return d, &FileError{&ValidationError{File: file, Errors: []FieldError{d.semantic(serr)}}}
	}
	return d, d.Problem("$", "", err.Error(), fix)
}

// Problem returns a *FileError for the value at path (a FieldError
// path such as `bases["nvcr.io/nvidia/l4t-jetpack:r36.4.0"]`), placed at
// its line and column. value is the offending value as JSON text, or "";
// an empty fix means the document's.
func (d *Document) Problem(path, value, message, fix string) *FileError {
	if fix == "" {
		fix = d.fix
	}
	fe := FieldError{Path: path, Value: value, Message: message, Fix: fix}
	errs := []FieldError{fe}
	placeAll(errs, d.pos, d.data)
	return &FileError{&ValidationError{File: d.file, Errors: errs}}
}

// semantic turns a decoding error into a FieldError at its place.
func (d *Document) semantic(serr *json.SemanticError) FieldError {
	path := d.pointerPath(serr.JSONPointer)
	fe := FieldError{Path: path, Fix: d.fix}
	if off, ok := d.pos[path]; ok {
		fe.Line, fe.Column = computecap.LineColumn(d.data, off)
	} else {
		fe.Line, fe.Column = computecap.LineColumn(d.data, serr.ByteOffset)
	}
	switch {
	case errors.Is(serr.Err, json.ErrUnknownName):
		name := serr.JSONPointer.LastToken()
		fe.Message = "unknown field"
		fe.Fix = unknownFieldFix(name, jsonFields(serr.GoType))
	case serr.GoType != nil && serr.JSONKind != 0:
		fe.Message = "must be " + goKind(serr.GoType) + ", not " + jsonKind(serr.JSONKind)
		if serr.JSONKind != '{' && serr.JSONKind != '[' {
			fe.Value = d.rawAt(path)
		}
	default:
		fe.Message = "cannot be read: " + serr.Error()
	}
	return fe
}

// pointerPath writes a JSON pointer as a FieldError path, telling array
// indexes from member names by the positions the scan recorded.
func (d *Document) pointerPath(p jsontext.Pointer) string {
	path := "$"
	if d.prefix != "" {
		path = d.prefix
	}
	for tok := range p.Tokens() {
		if n, err := strconv.Atoi(tok); err == nil {
			if _, isIndex := d.pos[indexPath(path, n)]; isIndex {
				path = indexPath(path, n)
				continue
			}
		}
		path = keyPath(path, tok)
	}
	return path
}

// rawAt returns the JSON text of the value at path, cut for a message,
// or "" when the scan did not record it.
func (d *Document) rawAt(path string) string {
	off, ok := d.pos[path]
	if !ok {
		return ""
	}
	v, err := jsontext.NewDecoder(bytes.NewReader(d.data[off:])).ReadValue()
	if err != nil {
		return ""
	}
	return cutText(string(v))
}

// MemberPath appends a member name to a FieldError path, quoting names
// that are not plain: MemberPath("bases", "nvcr.io/x:1") is
// `bases["nvcr.io/x:1"]`.
func MemberPath(path, name string) string { return keyPath(path, name) }

// jsonFields lists the JSON names of a struct type's fields, for the fix
// of an unknown field.
func jsonFields(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "":
			names = append(names, jsonFields(f.Type)...)
		case name == "":
			names = append(names, f.Name)
		default:
			names = append(names, name)
		}
	}
	return names
}

// goKind names the JSON type a Go type is read from, with its article.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + t.String()
}

// jsonKind names a JSON kind with its article.
func jsonKind(k jsontext.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "something else"
}
