package matrix

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseErrors parses data and returns its field errors.
func parseErrors(t *testing.T, data string) []FieldError {
	t.Helper()
	m, err := Parse([]byte(data))
	require.Nil(t, m)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	return verr.Errors
}

func TestErrorsCarryLineAndColumn(t *testing.T) {
	data := string(shipped(t))
	data = strings.Replace(data, `"tier": "legacy"`, `"tier": "stable"`, 1)                   // a schema error
	data = strings.Replace(data, `"targets": ["11.0"]`, `"targets": ["8.7"]`, 1)              // a rule error
	data = strings.Replace(data, `"output": "/usr/local/bin/text-embeddings-router",`, "", 1) // a missing field
	errs := parseErrors(t, data)
	lines := strings.Split(data, "\n")
	for _, tc := range []struct{ path, at string }{
		{"releases[0].tier", `"stable"`},
		{"releases[3].targets[0]", `"8.7"`},
		{"router.output", `{`}, // the object that lacks it
	} {
		var fe *FieldError
		for i := range errs {
			if errs[i].Path == tc.path {
				fe = &errs[i]
			}
		}
		require.NotNil(t, fe, "%s in %v", tc.path, errs)
		require.Positive(t, fe.Line, tc.path)
		line := lines[fe.Line-1]
		require.True(t, strings.HasPrefix(line[fe.Column-1:], tc.at), "%s: line %d col %d is %q", tc.path, fe.Line, fe.Column, line)
	}
}

func TestByteOrderMarkIsNamed(t *testing.T) {
	errs := parseErrors(t, "\xEF\xBB\xBF"+string(shipped(t)))
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Message, "byte order mark")
	require.Contains(t, errs[0].Fix, "without a BOM")
}

func TestInvalidUTF8IsRefusedWithOffset(t *testing.T) {
	data := strings.Replace(string(shipped(t)), "Jetson AGX Thor", "Jetson AGX \xff Thor", 1)
	errs := parseErrors(t, data)
	require.Len(t, errs, 1)
	offset := strings.Index(data, "\xff")
	require.Contains(t, errs[0].Message, "not valid UTF-8 at byte offset "+strconv.Itoa(offset))
}

func TestDuplicateFieldHasPosition(t *testing.T) {
	data := strings.Replace(string(shipped(t)), `"router": {`, "\"router\": {\n    \"version\": \"x\",", 1)
	errs := parseErrors(t, data)
	require.Len(t, errs, 1)
	require.Equal(t, "router.version", errs[0].Path)
	require.Contains(t, errs[0].Message, "duplicate field")
	require.Positive(t, errs[0].Line)
}

func TestGitHubAnnotations(t *testing.T) {
	v := &ValidationError{File: "ci/matrix.json", Errors: []FieldError{
		{Path: "releases[0].tier", Value: `"stable"`, Message: "unknown tier", Fix: "use one of a, b", Line: 34, Column: 15},
		{Path: "$", Message: "50%\nbad"},
	}}
	require.Equal(t,
		"::error file=ci/matrix.json,line=34,col=15,title=releases[0].tier::releases[0].tier: \"stable\": unknown tier; fix: use one of a, b\n"+
			"::error file=ci/matrix.json,title=$::$: 50%25%0Abad\n",
		v.GitHubAnnotations())
}

func TestParentPath(t *testing.T) {
	for in, want := range map[string]string{
		"releases[2].tier": "releases[2]", "releases[2]": "releases", "releases": "$", "$": "",
		`image.labels["a b"]`: "image.labels",
	} {
		require.Equal(t, want, parentPath(in), in)
	}
}

// The paths scanDocument records come from jsontext's StackPointer: a
// pointer token that looks like an index ("/2") is a member name inside an
// object and an index inside an array, and names that are not plain are
// quoted.
func TestScanPathsFromStackPointer(t *testing.T) {
	data := `{"a": [1, {"2": [true, null]}], "x y": {"": "s"}, "b": []}`
	pos, ferr := scanDocument([]byte(data))
	require.Nil(t, ferr)
	want := map[string]string{
		"$":            `{"a"`,
		"a":            `[1`,
		"a[0]":         `1,`,
		"a[1]":         `{"2"`,
		"a[1].2":       `[true`,
		"a[1].2[0]":    `true`,
		"a[1].2[1]":    `null`,
		`$["x y"]`:     `{""`,
		`$["x y"][""]`: `"s"`,
		"b":            `[]`,
	}
	got := map[string]string{}
	for path, off := range pos {
		got[path] = data[off : off+int64(len(want[path]))]
	}
	require.Equal(t, want, got)

	arr, ferr := scanDocument([]byte(`[{"k": [0]}]`))
	require.Nil(t, ferr)
	require.Equal(t, positions{"$": 0, "$[0]": 1, "$[0].k": 7, "$[0].k[0]": 8}, arr)
}

func TestScanDuplicateNameInArrayItem(t *testing.T) {
	_, ferr := scanDocument([]byte("{\"r\": [{}, {\"n\": 1,\n \"n\": 2}]}"))
	require.NotNil(t, ferr)
	require.Equal(t, "r[1].n", ferr.Path)
	require.Equal(t, 2, ferr.Line)
	require.Contains(t, ferr.Message, "duplicate field")
}
