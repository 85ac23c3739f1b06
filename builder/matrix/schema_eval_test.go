package matrix

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// schemaEval applies the JSON Schema keywords matrix.schema.json uses (type,
// properties, required, additionalProperties, items, minItems, uniqueItems,
// minLength, pattern, enum, propertyNames and local $ref) to a document. It
// is a test tool, not a general validator.
type schemaEval struct {
	t    *testing.T
	root map[string]any
}

// errors returns one line per violated keyword.
func (e *schemaEval) errors(s map[string]any, v any, path string) []string {
	s = resolve(e.t, e.root, s)
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if typ, ok := s["type"].(string); ok && jsonType(v) != typ {
		fail("type %s, want %s", jsonType(v), typ)
		return errs
	}
	switch x := v.(type) {
	case string:
		if n, ok := s["minLength"].(float64); ok && float64(len(x)) < n {
			fail("shorter than %v", n)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			fail("does not match %s", p)
		}
		if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, any(x)) {
			fail("not in enum")
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && float64(len(x)) < n {
			fail("fewer than %v items", n)
		}
		if s["uniqueItems"] == true && hasDuplicate(x) {
			fail("items are not unique")
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, item := range x {
				errs = append(errs, e.errors(items, item, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case map[string]any:
		errs = append(errs, e.objectErrors(s, x, path)...)
	}
	return errs
}

// objectErrors applies the object keywords.
func (e *schemaEval) objectErrors(s, x map[string]any, path string) []string {
	var errs []string
	required, _ := s["required"].([]any)
	for _, r := range required {
		if _, ok := x[r.(string)]; !ok {
			errs = append(errs, path+": missing "+r.(string))
		}
	}
	props, _ := s["properties"].(map[string]any)
	for k, val := range x {
		if pn, ok := s["propertyNames"].(map[string]any); ok {
			errs = append(errs, e.errors(pn, k, path+"{key}")...)
		}
		if ps, ok := props[k].(map[string]any); ok {
			errs = append(errs, e.errors(ps, val, path+"."+k)...)
			continue
		}
		switch extra := s["additionalProperties"].(type) {
		case bool:
			if !extra {
				errs = append(errs, path+": unknown "+k)
			}
		case map[string]any:
			errs = append(errs, e.errors(extra, val, path+"."+k)...)
		}
	}
	return errs
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "null"
	}
}

// hasDuplicate reports whether two items encode to the same JSON.
func hasDuplicate(items []any) bool {
	seen := map[string]bool{}
	for _, it := range items {
		b, _ := json.Marshal(it)
		if seen[string(b)] {
			return true
		}
		seen[string(b)] = true
	}
	return false
}

// schemaErrors validates a document against matrix.schema.json.
func schemaErrors(t *testing.T, data []byte) []string {
	t.Helper()
	var doc any
	require.NoError(t, json.Unmarshal(data, &doc))
	schema := loadSchema(t)
	e := &schemaEval{t: t, root: schema}
	return e.errors(schema, doc, "$")
}

// shapeErrors runs the loader's shape check alone.
func shapeErrors(t *testing.T, data []byte) []FieldError {
	t.Helper()
	root, syntax := decodeTree(data)
	require.Nil(t, syntax)
	var errs checker
	checkShape(root, &errs)
	return errs.errs
}

func TestSchemaAcceptsShippedMatrix(t *testing.T) {
	require.Empty(t, schemaErrors(t, shipped(t)))
	require.Empty(t, shapeErrors(t, shipped(t)))
}

// TestSchemaAgreesOnBrokenCases checks that the schema rejects a broken
// matrix exactly when the loader's shape check does; the other cases break
// rules the schema cannot express (facts, unique tags, pinned contexts).
func TestSchemaAgreesOnBrokenCases(t *testing.T) {
	shapeCases := 0
	for _, tc := range ruleCases() {
		if tc.edit == nil {
			continue // raw cases are syntax errors or duplicate keys that JSON decoding hides
		}
		doc := shippedTree(t)
		tc.edit(doc)
		data, err := json.Marshal(doc)
		require.NoError(t, err)
		schemaErrs := schemaErrors(t, data)
		shapeErrs := shapeErrors(t, data)
		require.Equal(t, len(shapeErrs) > 0, len(schemaErrs) > 0,
			"%s: schema says %s; loader shape says %v", tc.name, strings.Join(schemaErrs, "; "), shapeErrs)
		if len(shapeErrs) > 0 {
			shapeCases++
		}
	}
	require.GreaterOrEqual(t, shapeCases, 15)
}
