package matrix

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lockShape is a small file shape for DecodeFile's tests.
type lockShape struct {
	SchemaVersion int               `json:"schema_version"`
	Bases         map[string]string `json:"bases"`
}

func TestDecodeFile(t *testing.T) {
	const fix = "run 'jetbake lock' to write it anew"
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "f.json:1:1: $: not valid JSON at line 1, column 1: unexpected end of the file; fix: correct the JSON at that place, or " + fix},
		{"cut short", `{"schema_version": 1, "bases": {`, "f.json:1:33: $: not valid JSON at line 1, column 33: unexpected end of the file"},
		{"unknown field", "{\n  \"schema_version\": 1,\n  \"releases\": []\n}", `f.json:3:15: releases: unknown field; fix: remove it; known fields here: bases, schema_version`},
		{"close to a known field", `{"base": {}}`, `f.json:1:10: base: unknown field; fix: did you mean "bases"?`},
		{"wrong type", `{"schema_version": 1, "bases": []}`, "f.json:1:32: bases: must be an object, not an array; fix: " + fix},
		{"wrong type inside", `{"bases": {"nvcr.io/a:1": 7}}`, `f.json:1:27: bases["nvcr.io/a:1"]: 7: must be a string, not a number`},
		{"NUL", "{\"bases\": {\"a\": \"\x00\"}}", `f.json:1:18: $: not valid JSON at line 1, column 18: invalid character '\x00' in string`},
		{"duplicate", `{"bases": {}, "bases": {}}`, "f.json:1:15: bases: duplicate field: JSON readers keep only one of them; fix: remove one"},
		{"BOM", "\xef\xbb\xbf{}", "f.json:1:1: $: the file starts with a UTF-8 byte order mark (BOM)"},
		{"array", `[]`, "f.json:1:1: $: must be an object, not an array"},
		{"two values", `{} {}`, `f.json:1:4: $: not valid JSON at line 1, column 4: invalid character '{' after top-level value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v lockShape
			_, err := DecodeFile("f.json", []byte(tt.in), &v, fix)
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			require.True(t, strings.HasPrefix(err.Error(), tt.want), "%s\nwant prefix\n%s", err, tt.want)
			require.NotContains(t, err.Error(), "\n")
		})
	}
	var v lockShape
	d, err := DecodeFile("f.json", []byte("{\n  \"schema_version\": 2,\n  \"bases\": {}\n}"), &v, fix)
	require.NoError(t, err)
	require.Equal(t, 2, v.SchemaVersion)
	require.EqualError(t, d.Problem("schema_version", "2", "is not a schema this jetbake reads", ""),
		"f.json:2:21: schema_version: 2: is not a schema this jetbake reads; fix: "+fix)
	require.Equal(t, `bases["nvcr.io/x:1"]`, MemberPath("bases", "nvcr.io/x:1"))
}

func FuzzDecodeFile(f *testing.F) {
	f.Add([]byte(`{"schema_version": 1, "bases": {"a": "b"}}`))
	f.Add([]byte(`{"bases": []}`))
	f.Add([]byte(`{"x": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v lockShape
		_, err := DecodeFile("f.json", data, &v, "fix it")
		if err == nil {
			return
		}
		var verr *ValidationError
		if !strings.HasPrefix(err.Error(), "f.json") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("error not in the matrix's shape: %q", err)
		}
		_ = verr
	})
}
