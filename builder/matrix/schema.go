package matrix

import (
	"bytes"
	_ "embed" // matrix.schema.json
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaJSON is matrix.schema.json, the one definition of the matrix's
// shape: editors read it through the matrix's "$schema" key, and Parse
// validates every matrix against it. Nothing writes it: SchemaJSON hands
// out copies, so no importer can change what compiledSchema compiles.
//
//go:embed matrix.schema.json
var schemaJSON []byte

// SchemaJSON returns a copy of matrix.schema.json as embedded in this
// binary: the schema Parse validates against, for writing next to a matrix.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

// schemaURL is the name the schema is compiled under; errors carry it.
const schemaURL = "jetbake:matrix.schema.json"

// compiledSchema compiles schemaJSON once. It is immutable after the first
// call.
var compiledSchema = sync.OnceValues(func() (*compiled, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("matrix.schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("matrix.schema.json: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("matrix.schema.json: %w", err)
	}
	raw, _ := doc.(map[string]any)
	return &compiled{schema: s, doc: raw}, nil
})

// compiled is the compiled schema and its JSON document, which the fix
// texts read examples and property names from.
type compiled struct {
	schema *jsonschema.Schema
	doc    map[string]any
}

// at returns the schema object at a JSON pointer such as
// "/$defs/release/properties/targets", following one "$ref" where the
// object is only a reference.
func (c *compiled) at(ptr string) map[string]any {
	var cur any = c.doc
	for tok := range strings.SplitSeq(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	obj, _ := cur.(map[string]any)
	if ref, ok := obj["$ref"].(string); ok {
		if target := c.at(strings.TrimPrefix(ref, "#")); target != nil {
			merged := make(map[string]any, len(target)+len(obj))
			for k, v := range target {
				merged[k] = v
			}
			for k, v := range obj {
				merged[k] = v
			}
			return merged
		}
	}
	return obj
}

// example returns the first of the "examples" of the schema at ptr as JSON
// text, or "" when it has none.
func (c *compiled) example(ptr string) string {
	ex, _ := c.at(ptr)["examples"].([]any)
	if len(ex) == 0 {
		return ""
	}
	return render(ex[0])
}

// propertyNames lists the properties the schema at ptr allows.
func (c *compiled) propertyNames(ptr string) []string {
	props, _ := c.at(ptr)["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	return names
}

// render writes a decoded JSON value as short JSON text for error messages.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return cutText(string(b))
}

// article names a JSON type with its article: "a string", "an array".
func article(jsonType string) string {
	switch jsonType {
	case "object", "array", "integer":
		return "an " + jsonType
	case "null":
		return "null"
	}
	return "a " + jsonType
}
