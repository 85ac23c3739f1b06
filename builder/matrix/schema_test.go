package matrix

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// schemaPath is the JSON Schema the repository ships for editors.
const schemaPath = "../../matrix.schema.json"

// loadSchema reads matrix.schema.json as generic JSON.
func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s), "matrix.schema.json must be valid JSON")
	return s
}

// resolve follows a local "$ref" such as "#/$defs/router", merging the
// referring object's own keywords over the target's.
func resolve(t *testing.T, schema, s map[string]any) map[string]any {
	t.Helper()
	ref, ok := s["$ref"].(string)
	if !ok {
		return s
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	require.True(t, ok, "only local $defs references are used: %s", ref)
	def, ok := schema["$defs"].(map[string]any)[name].(map[string]any)
	require.True(t, ok, "$defs/%s exists", name)
	merged := map[string]any{}
	for k, v := range resolve(t, schema, def) {
		merged[k] = v
	}
	for k, v := range s {
		if k != "$ref" {
			merged[k] = v
		}
	}
	return merged
}

// stringsOf converts a JSON array of strings.
func stringsOf(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestSchemaMatchesLoader(t *testing.T) {
	schema := loadSchema(t)
	require.Equal(t, "https://json-schema.org/draft/2020-12/schema", schema["$schema"])
	checkSchemaObject(t, schema, schema, &rootRule, "root")
	for _, rule := range []*objectRule{&routerRule, &imageRule, &releaseRule} {
		def := schema["$defs"].(map[string]any)[rule.name]
		require.NotNil(t, def, "$defs/%s", rule.name)
		checkSchemaObject(t, schema, def.(map[string]any), rule, rule.name)
	}
}

// checkSchemaObject compares one object of the schema with its Go rule.
func checkSchemaObject(t *testing.T, schema, obj map[string]any, rule *objectRule, where string) {
	t.Helper()
	require.Equal(t, "object", obj["type"], where)
	require.Equal(t, false, obj["additionalProperties"], "%s: unknown fields are refused", where)
	var required, names []string
	for _, f := range rule.fields {
		names = append(names, f.name)
		if f.required {
			required = append(required, f.name)
		}
	}
	require.ElementsMatch(t, required, stringsOf(obj["required"]), "%s: required fields", where)
	props := obj["properties"].(map[string]any)
	var schemaNames []string
	for k := range props {
		schemaNames = append(schemaNames, k)
	}
	require.ElementsMatch(t, names, schemaNames, "%s: fields", where)
	for _, f := range rule.fields {
		raw := props[f.name].(map[string]any)
		switch f.kind {
		case fieldObject:
			require.Equal(t, "#/$defs/"+f.object.name, raw["$ref"], where+"."+f.name)
		case fieldObjectList:
			items := raw["items"].(map[string]any)
			require.Equal(t, "#/$defs/"+f.object.name, items["$ref"], where+"."+f.name)
		}
		checkSchemaField(t, schema, resolve(t, schema, raw), &f, where+"."+f.name)
	}
}

// checkSchemaField compares one field of the schema with its Go rule.
func checkSchemaField(t *testing.T, schema, s map[string]any, f *fieldRule, where string) {
	t.Helper()
	switch f.kind {
	case fieldString:
		require.Equal(t, "string", s["type"], where)
		checkSchemaString(t, s, f, where)
	case fieldObject:
		require.Equal(t, "object", s["type"], where)
	case fieldStringList, fieldObjectList:
		require.Equal(t, "array", s["type"], where)
		require.Equal(t, float64(f.minItems), numberOr(s["minItems"]), "%s: minItems", where)
		require.Equal(t, f.unique, s["uniqueItems"] == true, "%s: uniqueItems", where)
		items := resolve(t, schema, s["items"].(map[string]any))
		if f.kind == fieldObjectList {
			require.Equal(t, "object", items["type"], where)
			return
		}
		require.Equal(t, "string", items["type"], where+"[]")
		checkSchemaString(t, items, f, where+"[]")
	case fieldStringMap:
		require.Equal(t, "object", s["type"], where)
		require.Equal(t, map[string]any{"type": "string"}, s["additionalProperties"], where)
		key := ""
		if pn, ok := s["propertyNames"].(map[string]any); ok {
			key, _ = pn["pattern"].(string)
		}
		require.Equal(t, patternOf(f.keyPattern), key, "%s: key pattern", where)
	case fieldTargetMap:
		require.Equal(t, "object", s["type"], where)
		require.Equal(t, patternOf(f.keyPattern), s["propertyNames"].(map[string]any)["pattern"], "%s: key pattern", where)
		inner := s["additionalProperties"].(map[string]any)
		require.Equal(t, "object", inner["type"], where)
		require.Equal(t, map[string]any{"type": "string"}, inner["additionalProperties"], where)
		require.Equal(t, patternOf(f.valueKeyPattern), inner["propertyNames"].(map[string]any)["pattern"], "%s: build arg key pattern", where)
	}
}

// checkSchemaString compares the string keywords of the schema and a rule.
func checkSchemaString(t *testing.T, s map[string]any, f *fieldRule, where string) {
	t.Helper()
	got, _ := s["pattern"].(string)
	require.Equal(t, patternOf(f.pattern), got, "%s: pattern", where)
	require.Equal(t, float64(f.minLength), numberOr(s["minLength"]), "%s: minLength", where)
	if f.enum == nil {
		require.Nil(t, s["enum"], where)
		return
	}
	require.Equal(t, f.enum, stringsOf(s["enum"]), "%s: enum", where)
}

// patternOf returns a regexp's source, or "" for none.
func patternOf(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	return re.String()
}

// numberOr returns a JSON number, or 0 when absent.
func numberOr(v any) float64 {
	n, _ := v.(float64)
	return n
}

func TestSchemaTierEnum(t *testing.T) {
	schema := loadSchema(t)
	release := schema["$defs"].(map[string]any)["release"].(map[string]any)
	tier := release["properties"].(map[string]any)["tier"].(map[string]any)
	require.Equal(t, Tiers(), stringsOf(tier["enum"]))
}

func TestSchemaPlaceholdersDocumented(t *testing.T) {
	schema := loadSchema(t)
	desc := schema["$defs"].(map[string]any)["tagTemplate"].(map[string]any)["description"].(string)
	for _, p := range Placeholders() {
		require.Contains(t, desc, "{"+p+"}")
	}
	require.True(t, slices.Contains(Placeholders(), "jetpack_major"))
}
