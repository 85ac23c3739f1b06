package matrix

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// schemaDoc returns the embedded schema as generic JSON.
func schemaDoc(t *testing.T) map[string]any {
	t.Helper()
	c, err := compiledSchema()
	require.NoError(t, err)
	require.Equal(t, "https://json-schema.org/draft/2020-12/schema", c.doc["$schema"])
	return c.doc
}

func TestSchemaExamplesAreValid(t *testing.T) {
	// Fix texts quote the schema's examples, so each must pass its own
	// subschema (objects' examples are partial and are not checked).
	c, err := compiledSchema()
	require.NoError(t, err)
	count := 0
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		if ex, ok := obj["examples"].([]any); ok && !strings.Contains(render(ex), "{") {
			comp := jsonschema.NewCompiler()
			require.NoError(t, comp.AddResource(schemaURL, mustUnmarshal(t, SchemaJSON())))
			sub, err := comp.Compile(schemaURL + "#" + ptr)
			require.NoError(t, err, ptr)
			for _, e := range ex {
				require.NoError(t, sub.Validate(e), "%s: example %v", ptr, e)
				count++
			}
		}
		for k, child := range obj {
			walk(ptr+"/"+strings.ReplaceAll(k, "/", "~1"), child)
		}
	}
	walk("", c.doc)
	require.Greater(t, count, 20)
}

// mustUnmarshal decodes JSON as the schema library wants it.
func mustUnmarshal(t *testing.T, data []byte) any {
	t.Helper()
	v, err := decodeGeneric(data)
	require.NoError(t, err)
	return v
}

func TestSchemaHintsNameRealLocations(t *testing.T) {
	c, err := compiledSchema()
	require.NoError(t, err)
	for key := range shapeHints() {
		node := c.at(key[0])
		require.NotNil(t, node, "hint for %s: no such schema location", key[0])
		require.Contains(t, node, key[1], "hint for %s: no %s keyword there", key[0], key[1])
	}
}

func TestSchemaTierEnum(t *testing.T) {
	schema := schemaDoc(t)
	tier := schema["$defs"].(map[string]any)["release"].(map[string]any)["properties"].(map[string]any)["tier"].(map[string]any)
	var got []string
	for _, v := range tier["enum"].([]any) {
		got = append(got, v.(string))
	}
	require.Equal(t, Tiers(), got)
}

func TestSchemaPlaceholdersDocumented(t *testing.T) {
	schema := schemaDoc(t)
	desc := schema["$defs"].(map[string]any)["tagTemplate"].(map[string]any)["description"].(string)
	for _, p := range Placeholders() {
		require.Contains(t, desc, "{"+p+"}")
	}
	require.True(t, slices.Contains(Placeholders(), "jetpack_major"))
}

func TestSchemaMatchesStructFields(t *testing.T) {
	// Every field the schema allows is decoded into Matrix, and every JSON
	// field of Matrix is in the schema.
	schema := schemaDoc(t)
	defs := schema["$defs"].(map[string]any)
	for def, v := range map[string]any{"router": Router{}, "image": Publish{}, "release": Release{}} {
		props := defs[def].(map[string]any)["properties"].(map[string]any)
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var fields map[string]any
		require.NoError(t, json.Unmarshal(b, &fields))
		for k := range fields {
			require.Contains(t, props, k, "$defs/%s lacks the field %s", def, k)
		}
	}
}

// ociTag is the tag rule of the OCI distribution specification.
var ociTag = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

func TestValidTagMatchesDistributionSpec(t *testing.T) {
	for _, s := range []string{"", "1.8.0-jetpack6.2", "jetpack6", "_x", ".x", "-x", "a.b-c_d", "a+b", "a/b", "ä",
		strings.Repeat("a", 128), strings.Repeat("a", 129), "A-Z.9"} {
		require.Equal(t, ociTag.MatchString(s), ValidTag(s), "%q", s)
	}
}

// SchemaJSON hands out copies: what a caller does to one changes neither
// the next copy nor the schema Parse compiles.
func TestSchemaJSONIsACopy(t *testing.T) {
	onDisk, err := os.ReadFile("matrix.schema.json")
	require.NoError(t, err)
	first := SchemaJSON()
	require.Equal(t, onDisk, first)
	clear(first)
	require.Equal(t, onDisk, SchemaJSON())
	_, err = Parse([]byte(`{}`))
	require.ErrorContains(t, err, "router", "validation still runs against the schema")
}
