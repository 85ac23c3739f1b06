package matrix

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/jetbake/jetbake/computecap"
)

// shapeHint replaces the schema library's generic sentence for one keyword
// of one schema location with jetbake's own message and fix.
type shapeHint struct {
	mismatch, fix string
}

// baseFix explains how to write a pinned base image.
const baseFix = `write a full reference with a tag or digest, e.g. "nvcr.io/nvidia/l4t-jetpack:r36.4.0"`

// tagFix explains how to write a tag template.
const tagFix = "use letters, digits, '_', '.', '-' and placeholders such as {version} and {jetpack}"

// shapeHints are keyed by schema location (a JSON pointer into
// matrix.schema.json) and keyword. Locations without a hint get a message
// built from the keyword and a fix from the schema's "examples".
func shapeHints() map[[2]string]shapeHint {
	smKey := shapeHint{mismatch: "is not a compute capability in MAJOR.MINOR form",
		fix: `write it like "7.2" (Xavier) or "8.7" (Orin), as in targets`}
	return map[[2]string]shapeHint{
		{"/$defs/router/properties/output", "pattern"}: {
			mismatch: "is not an absolute path: the builder copies the binary from this path of the build stage",
			fix:      `write it from the root, e.g. "/usr/local/bin/text-embeddings-router"`},
		{"/$defs/image/properties/repository", "pattern"}: {
			mismatch: "is not a valid image repository (lowercase, no tag)",
			fix:      `write it like "ghcr.io/OWNER/NAME", without ":tag"`},
		{"/$defs/imageReference", "pattern"}: {mismatch: "is not a pinned image reference", fix: baseFix},
		{"/$defs/tagTemplate", "pattern"}:    {fix: tagFix},
		{"/$defs/release/properties/name", "pattern"}: {
			fix: "use lowercase letters, digits, '_', '.' and '-': the name can appear in tags"},
		{"/$defs/release/properties/l4t", "pattern"}: {
			fix: `write the full Jetson Linux version MAJOR.MINOR.PATCH, e.g. "36.4.3"`},
		{"/$defs/router/properties/ports/items", "pattern"}:              {mismatch: "is not a port", fix: `write it like "80/tcp" or "8080"`},
		{"/$defs/router/properties/target_build_args", "propertyNames"}:  smKey,
		{"/$defs/release/properties/target_build_args", "propertyNames"}: smKey,
		{"/$defs/release/properties/targets/items", "pattern"}: {
			mismatch: "is not a compute capability in MAJOR.MINOR form",
			fix:      targetsFix(computecap.DefaultTable())},
	}
}

// Tiers are the support tiers a release may have, from most to least trusted.
// "supported" needs evidence from real hardware.
func Tiers() []string {
	return []string{"supported", "candidate", "evaluate-later", "legacy"}
}

// shapeErrors validates doc against matrix.schema.json and returns one
// FieldError per violated keyword, and the paths whose values are of the
// wrong shape (the rules skip those).
func shapeErrors(c *compiled, doc any) ([]FieldError, []string) {
	err := c.schema.Validate(doc)
	var verr *jsonschema.ValidationError
	if err == nil || !errors.As(err, &verr) {
		return nil, nil
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(verr, nil, &leaves)
	hints := shapeHints()
	var out []FieldError
	var bad []string
	for _, l := range leaves {
		fes, invalid := describe(c, hints, doc, l)
		out = append(out, fes...)
		if invalid {
			bad = append(bad, locationPath(doc, l.InstanceLocation))
		}
	}
	return out, bad
}

// collectLeaves gathers the errors that name one keyword: those without
// causes, and propertyNames errors, whose cause only repeats the pattern.
func collectLeaves(e *jsonschema.ValidationError, parent *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	if _, ok := e.ErrorKind.(*kind.PropertyNames); ok || len(e.Causes) == 0 {
		if ok && parent != nil {
			e.InstanceLocation = slices.Clone(parent.InstanceLocation)
		}
		*out = append(*out, e)
		return
	}
	for _, cause := range e.Causes {
		collectLeaves(cause, e, out)
	}
}

// mapLocation finds the object whose key broke a propertyNames rule.
// jsonschema v6.0.3 keeps that error's location without copying it, so
// collectLeaves gave it its parent's: the object itself, or the object
// holding it under the property the schema location names
// (".../properties/NAME/propertyNames").
func mapLocation(doc any, loc []string, ptr, key string) []string {
	if obj, ok := valueAt(doc, loc).(map[string]any); ok {
		if _, has := obj[key]; has {
			return loc
		}
	}
	rest, ok := strings.CutSuffix(ptr, "/propertyNames")
	if !ok {
		return loc
	}
	return append(slices.Clone(loc), rest[strings.LastIndexByte(rest, '/')+1:])
}

// describe turns one violated keyword into FieldErrors, and reports whether
// the value itself is unusable (the rules then skip it).
func describe(c *compiled, hints map[[2]string]shapeHint, doc any, e *jsonschema.ValidationError) ([]FieldError, bool) {
	_, ptr, _ := strings.Cut(e.SchemaURL, "#")
	if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		e.InstanceLocation = mapLocation(doc, e.InstanceLocation, ptr, k.Property)
	}
	path := locationPath(doc, e.InstanceLocation)
	value := valueAt(doc, e.InstanceLocation)
	keyword := strings.Join(e.ErrorKind.KeywordPath(), "/")
	hint := hints[[2]string{strings.TrimSuffix(ptr, "/"+keyword), keyword}]
	example := c.example(ptr)
	like := "write it like " + example
	one := func(fe FieldError) []FieldError { return []FieldError{fe} }
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		fix := like
		switch {
		case path == "$":
			fix = "write the matrix as one JSON object with router, image and releases"
		case slices.Contains(k.Want, "string") && example != "":
			fix = "quote it, e.g. " + example
		}
		return one(FieldError{Path: path, Value: render(value), Message: "must be " + article(k.Want[0]) + ", not " + article(k.Got), Fix: fix}), true
	case *kind.Required:
		out := make([]FieldError, len(k.Missing))
		for i, name := range k.Missing {
			out[i] = FieldError{Path: keyPath(path, name), Message: "missing required field",
				Fix: `add "` + name + `": ` + c.example(ptr+"/properties/"+name)}
		}
		return out, false
	case *kind.AdditionalProperties:
		obj, _ := value.(map[string]any)
		out := make([]FieldError, len(k.Properties))
		for i, name := range k.Properties {
			out[i] = FieldError{Path: keyPath(path, name), Value: render(obj[name]), Message: "unknown field",
				Fix: unknownFieldFix(name, c.propertyNames(ptr))}
		}
		return out, false
	case *kind.PropertyNames:
		pattern, _ := c.at(ptr)["pattern"].(string)
		return one(FieldError{Path: keyPath(path, k.Property), Value: strconv.Quote(k.Property),
			Message: orDefault(hint.mismatch, "is not a valid key"), Fix: orDefault(hint.fix, "keys must match "+pattern)}), false
	case *kind.Pattern:
		msg := hint.mismatch
		if msg == "" {
			msg = "does not have the expected form " + k.Want
		}
		return one(FieldError{Path: path, Value: quote(k.Got), Message: msg, Fix: orDefault(hint.fix, like)}), true
	case *kind.MaxLength:
		return one(FieldError{Path: path, Value: render(value),
			Message: "is " + strconv.Itoa(k.Got) + " characters long, more than the " + strconv.Itoa(k.Want) +
				" that a tag, a file name and an OCI annotation can all carry", Fix: "shorten it"}), true
	case *kind.MinLength, *kind.MinItems:
		return one(FieldError{Path: path, Value: render(value), Message: "must not be empty", Fix: like}), true
	case *kind.UniqueItems:
		j := k.Duplicates[1]
		return one(FieldError{Path: indexPath(path, j), Value: render(valueAt(doc, append(e.InstanceLocation, strconv.Itoa(j)))),
			Message: "repeats " + indexPath(path, k.Duplicates[0]), Fix: "remove the repeated item"}), false
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = render(w)
		}
		field := e.InstanceLocation[len(e.InstanceLocation)-1]
		return one(FieldError{Path: path, Value: render(value), Message: "unknown " + field, Fix: "use one of " + strings.Join(want, ", ")}), true
	}
	return one(FieldError{Path: path, Value: render(value), Message: e.ErrorKind.KeywordPath()[0] + " check failed", Fix: like}), true
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// valueAt returns the value at an instance location of doc, or nil.
func valueAt(doc any, loc []string) any {
	cur := doc
	for _, tok := range loc {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

// locationPath writes an instance location as a FieldError path, using doc
// to tell list indexes from member names.
func locationPath(doc any, loc []string) string {
	path, cur := "$", doc
	for _, tok := range loc {
		switch v := cur.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			path = indexPath(path, i)
			if i >= 0 && i < len(v) {
				cur = v[i]
			}
		case map[string]any:
			path = keyPath(path, tok)
			cur = v[tok]
		}
	}
	return path
}

// unknownFieldFix suggests the field that was probably meant.
func unknownFieldFix(key string, known []string) string {
	sort.Strings(known)
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestDist := "", 3
	for _, name := range known {
		if norm(name) == norm(key) {
			best, bestDist = name, 0
			break
		}
		long := len(key) >= 4 && len(name) >= 4
		if long && (strings.HasPrefix(name, key) || strings.HasPrefix(key, name)) && bestDist > 1 {
			best, bestDist = name, 1
			continue
		}
		if d := levenshtein.Distance(key, name, nil); d < bestDist {
			best, bestDist = name, d
		}
	}
	if best != "" {
		return `did you mean "` + best + `"?`
	}
	return "remove it; known fields here: " + strings.Join(known, ", ")
}

// targetsFix shows the SMs of the Jetsons the table's JetPack releases
// support: `write it like "7.2" (Xavier), "8.7" (Orin) or "11.0" (Thor)`.
func targetsFix(t *computecap.Table) string {
	var parts []string
	for _, soc := range t.SoCs {
		for _, r := range t.JetPacks {
			if !r.Preview && soc.Supports(r.JetPack) {
				parts = append(parts, quote(soc.Capability.String())+" ("+soc.Family+")")
				break
			}
		}
	}
	if len(parts) == 0 {
		return `write it like "8.7"`
	}
	last := parts[len(parts)-1]
	if len(parts) == 1 {
		return "write it like " + last
	}
	return "write it like " + strings.Join(parts[:len(parts)-1], ", ") + " or " + last
}
