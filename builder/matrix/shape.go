package matrix

import (
	"regexp"
	"slices"
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// fieldKind is the JSON shape a field must have.
type fieldKind int

const (
	fieldString fieldKind = iota
	fieldStringList
	fieldStringMap
	fieldObject
	fieldObjectList
)

// fieldRule says what one field of an object must look like. The same rules
// are written in matrix.schema.json; a test keeps the two in step.
type fieldRule struct {
	name     string
	kind     fieldKind
	required bool
	// minLength applies to strings and the strings of lists and maps.
	minLength int
	// minItems and unique apply to lists.
	minItems int
	unique   bool
	// pattern applies to strings, list items and map values.
	pattern *regexp.Regexp
	// keyPattern applies to map keys.
	keyPattern *regexp.Regexp
	// enum lists the allowed strings.
	enum []string
	// object describes an object or the items of an object list.
	object *objectRule
	// example is a valid value, shown in fixes.
	example string
	// mismatch replaces the generic pattern message, and fix its fix.
	mismatch, fix string
}

// objectRule lists the fields an object may have.
type objectRule struct {
	// name is the object's name in matrix.schema.json's $defs, empty for the root.
	name   string
	fields []fieldRule
}

// field returns the rule of a field name.
func (o *objectRule) field(name string) (*fieldRule, bool) {
	for i := range o.fields {
		if o.fields[i].name == name {
			return &o.fields[i], true
		}
	}
	return nil, false
}

// Tiers are the support tiers a release may have, from most to least trusted.
// "supported" needs evidence from real hardware.
func Tiers() []string {
	return []string{"supported", "candidate", "evaluate-later", "legacy"}
}

// Patterns shared with matrix.schema.json. They avoid backslashes so that the
// JSON text and the Go text are the same, and use only syntax that RE2 and
// ECMA-262 read alike.
const (
	namePattern       = `^[A-Za-z0-9][A-Za-z0-9_.-]*$`
	versionPattern    = `^[A-Za-z0-9][A-Za-z0-9_.+-]*$`
	absPathPattern    = `^/`
	sourcePattern     = `^https?://[^ ]+$`
	tagTmplPattern    = `^[A-Za-z0-9_.{}-]+$`
	labelKeyPattern   = `^[A-Za-z0-9][A-Za-z0-9_./-]*$`
	releaseNamePat    = `^[a-z0-9][a-z0-9_.-]*$`
	jetpackPattern    = `^[0-9]+[.][0-9]+([.][0-9]+)?$`
	l4tPattern        = `^[0-9]+[.][0-9]+[.][0-9]+$`
	cudaPattern       = `^[0-9]+[.][0-9]+$`
	ubuntuPattern     = `^[0-9]{2}[.][0-9]{2}$`
	smPattern         = `^[1-9][0-9]?[.][0-9]$`
	buildArgKeyPat    = `^[A-Za-z_][A-Za-z0-9_]*$`
	repoComponent     = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	domainComponent   = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	domain            = domainComponent + `(?:[.]` + domainComponent + `)*(?::[0-9]+)?`
	repo              = `(?:` + domain + `/)?` + repoComponent + `(?:/` + repoComponent + `)*`
	tag               = `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`
	digest            = `sha256:[a-f0-9]{64}`
	repositoryPattern = `^` + repo + `$`
	basePattern       = `^` + repo + `(?::` + tag + `(?:@` + digest + `)?|@` + digest + `)$`
	tagPattern        = `^` + tag + `$`
)

var (
	nameRE        = regexp.MustCompile(namePattern)
	versionRE     = regexp.MustCompile(versionPattern)
	absPathRE     = regexp.MustCompile(absPathPattern)
	sourceRE      = regexp.MustCompile(sourcePattern)
	tagTmplRE     = regexp.MustCompile(tagTmplPattern)
	labelKeyRE    = regexp.MustCompile(labelKeyPattern)
	releaseNameRE = regexp.MustCompile(releaseNamePat)
	jetpackRE     = regexp.MustCompile(jetpackPattern)
	l4tRE         = regexp.MustCompile(l4tPattern)
	cudaRE        = regexp.MustCompile(cudaPattern)
	ubuntuRE      = regexp.MustCompile(ubuntuPattern)
	smRE          = regexp.MustCompile(smPattern)
	buildArgKeyRE = regexp.MustCompile(buildArgKeyPat)
	repositoryRE  = regexp.MustCompile(repositoryPattern)
	baseRE        = regexp.MustCompile(basePattern)
	tagRE         = regexp.MustCompile(tagPattern)
)

// baseFix explains how to write a pinned base image.
const baseFix = `write a full reference with a tag or digest, e.g. "nvcr.io/nvidia/l4t-jetpack:r36.4.0"`

var routerRule = objectRule{name: "router", fields: []fieldRule{
	{name: "name", kind: fieldString, required: true, pattern: nameRE, example: `"text-embeddings-router"`},
	{name: "version", kind: fieldString, required: true, pattern: versionRE, example: `"1.8.0"`},
	{name: "context", kind: fieldString, required: true, minLength: 1,
		example: `"https://github.com/huggingface/text-embeddings-inference.git#v1.8.0"`},
	{name: "dockerfile", kind: fieldString, required: true, minLength: 1, example: `"dockerfiles/Dockerfile-jetson"`},
	{name: "target", kind: fieldString, required: true, pattern: nameRE, example: `"router"`},
	{name: "output", kind: fieldString, required: true, pattern: absPathRE, example: `"/usr/local/bin/text-embeddings-router"`,
		mismatch: "is not an absolute path: the builder copies the binary from this path of the build stage",
		fix:      `write it from the root, e.g. "/usr/local/bin/text-embeddings-router"`},
	{name: "smoke", kind: fieldStringList, example: `["--version"]`},
}}

var imageRule = objectRule{name: "image", fields: []fieldRule{
	{name: "repository", kind: fieldString, required: true, pattern: repositoryRE,
		example:  `"ghcr.io/jetbake/text-embeddings-router"`,
		mismatch: "is not a valid image repository (lowercase, no tag)",
		fix:      `write it like "ghcr.io/OWNER/NAME", without ":tag"`},
	{name: "source", kind: fieldString, required: true, pattern: sourceRE, example: `"https://github.com/jetbake/jetbake"`},
	{name: "tags", kind: fieldStringList, required: true, minItems: 1, unique: true, pattern: tagTmplRE,
		example: `["{version}-jetpack{jetpack}"]`,
		fix:     "use letters, digits, '_', '.', '-' and placeholders such as {version} and {jetpack}"},
	{name: "labels", kind: fieldStringMap, keyPattern: labelKeyRE, example: `{"org.opencontainers.image.licenses": "Apache-2.0"}`},
	{name: "annotations", kind: fieldStringMap, keyPattern: labelKeyRE, example: `{"org.opencontainers.image.licenses": "Apache-2.0"}`},
}}

var releaseRule = objectRule{name: "release", fields: []fieldRule{
	{name: "name", kind: fieldString, required: true, pattern: releaseNameRE, example: `"jetpack6.2"`,
		fix: "use lowercase letters, digits, '_', '.' and '-': the name can appear in tags"},
	{name: "jetpack", kind: fieldString, required: true, pattern: jetpackRE, example: `"6.2"`},
	{name: "l4t", kind: fieldString, required: true, pattern: l4tRE, example: `"36.4.3"`,
		fix: `write the full Jetson Linux version MAJOR.MINOR.PATCH, e.g. "36.4.3"`},
	{name: "cuda", kind: fieldString, required: true, pattern: cudaRE, example: `"12.6"`},
	{name: "ubuntu", kind: fieldString, required: true, pattern: ubuntuRE, example: `"22.04"`},
	{name: "build_base", kind: fieldString, required: true, pattern: baseRE, example: `"nvcr.io/nvidia/l4t-jetpack:r36.4.0"`,
		mismatch: "is not a pinned image reference", fix: baseFix},
	{name: "runtime_base", kind: fieldString, required: true, pattern: baseRE, example: `"nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"`,
		mismatch: "is not a pinned image reference", fix: baseFix},
	{name: "targets", kind: fieldStringList, required: true, minItems: 1, unique: true, pattern: smRE, example: `["8.7"]`,
		mismatch: "is not a compute capability in MAJOR.MINOR form",
		fix:      targetsFix(computecap.DefaultTable())},
	{name: "tier", kind: fieldString, required: true, enum: Tiers(), example: `"candidate"`},
	{name: "hardware", kind: fieldStringList, required: true, minItems: 1, minLength: 1, example: `["Jetson AGX Orin"]`},
	{name: "tags", kind: fieldStringList, unique: true, pattern: tagTmplRE, example: `["jetpack6"]`,
		fix: "use letters, digits, '_', '.', '-' and placeholders such as {version} and {jetpack}"},
	{name: "build_args", kind: fieldStringMap, keyPattern: buildArgKeyRE, example: `{"RUSTFLAGS": "-C target-cpu=native"}`},
}}

var rootRule = objectRule{fields: []fieldRule{
	{name: "$schema", kind: fieldString, example: `"./matrix.schema.json"`},
	{name: "router", kind: fieldObject, required: true, object: &routerRule, example: `{"name": ..., "version": ...}`},
	{name: "image", kind: fieldObject, required: true, object: &imageRule, example: `{"repository": ..., "tags": [...]}`},
	{name: "releases", kind: fieldObjectList, required: true, minItems: 1, object: &releaseRule, example: `[{"name": "jetpack6.2", ...}]`},
}}

// checkShape reports every field of the tree that does not have the type,
// form or presence rootRule asks for.
func checkShape(root *node, errs *checker) {
	checkObject(root, &rootRule, nil, nil, false, errs)
}

// jsonPath is the JSON path of a value, turned into text only when an error
// names it. The nil path is the document itself, "$".
type jsonPath struct {
	parent  *jsonPath
	key     string
	index   int
	isIndex bool
}

// String writes the path as "releases[2].targets[1]".
func (p *jsonPath) String() string {
	if p == nil {
		return "$"
	}
	base := ""
	if p.parent != nil {
		base = p.parent.String()
	}
	if p.isIndex {
		return indexPath(base, p.index)
	}
	return keyPath(base, p.key)
}

// objectFix says how to write an object that is something else: the value
// of field f (an item of its list when item is set), or the document when f
// is nil.
func objectFix(f *fieldRule, item bool) string {
	switch {
	case f == nil:
		return "write the matrix as one JSON object with router, image and releases"
	case item:
		return "write each item as an object like " + firstExample(f)
	default:
		return "write it like " + f.example
	}
}

// checkObject checks an object's members against its rule; f and item
// describe where the object is, for the fix when it is not an object.
func checkObject(n *node, rule *objectRule, path *jsonPath, f *fieldRule, item bool, errs *checker) {
	if n.kind != kindObject {
		errs.add(path.String(), n.render(), "must be an object, not "+n.kind.article(), objectFix(f, item))
		return
	}
	seen := newKeySet(len(n.keys))
	for i, key := range n.keys {
		p := jsonPath{parent: path, key: key}
		if seen.has(n.keys[:i], key) {
			errs.add(p.String(), n.values[i].render(), "duplicate field: JSON readers keep only one of them", "remove one")
			continue
		}
		field, ok := rule.field(key)
		if !ok {
			errs.add(p.String(), n.values[i].render(), "unknown field", unknownFieldFix(key, rule))
			continue
		}
		checkField(n.values[i], field, &p, errs)
	}
	for _, field := range rule.fields {
		if _, present := n.member(field.name); field.required && !present {
			p := jsonPath{parent: path, key: field.name}
			errs.add(p.String(), "", "missing required field", "add \""+field.name+"\": "+field.example)
		}
	}
}

// checkField checks one present field against its rule.
func checkField(n *node, f *fieldRule, path *jsonPath, errs *checker) {
	switch f.kind {
	case fieldString:
		checkString(n, f, path, errs)
	case fieldObject:
		checkObject(n, f.object, path, f, false, errs)
	case fieldStringList, fieldObjectList:
		checkList(n, f, path, errs)
	case fieldStringMap:
		checkMap(n, f, path, errs)
	}
}

// checkList checks a list field and its items.
func checkList(n *node, f *fieldRule, path *jsonPath, errs *checker) {
	if n.kind != kindArray {
		errs.add(path.String(), n.render(), "must be a list, not "+n.kind.article(), "write it like "+f.example)
		return
	}
	if len(n.values) < f.minItems {
		errs.add(path.String(), "[]", "must not be empty", "write it like "+f.example)
	}
	var first map[string]int
	if f.unique {
		first = make(map[string]int, len(n.values))
	}
	for i, item := range n.values {
		p := jsonPath{parent: path, index: i, isIndex: true}
		if f.kind == fieldObjectList {
			checkObject(item, f.object, &p, f, true, errs)
			continue
		}
		if !checkString(item, f, &p, errs) || !f.unique {
			continue
		}
		if j, dup := first[item.text]; dup {
			errs.addString(p.String(), item.text, "repeats "+indexPath(path.String(), j), "remove the repeated item")
			continue
		}
		first[item.text] = i
	}
}

// checkMap checks a map of strings.
func checkMap(n *node, f *fieldRule, path *jsonPath, errs *checker) {
	if n.kind != kindObject {
		errs.add(path.String(), n.render(), "must be an object of strings, not "+n.kind.article(), "write it like "+f.example)
		return
	}
	seen := newKeySet(len(n.keys))
	for i, key := range n.keys {
		p := jsonPath{parent: path, key: key}
		switch {
		case seen.has(n.keys[:i], key):
			errs.add(p.String(), n.values[i].render(), "duplicate key: JSON readers keep only one of them", "remove one")
		case f.keyPattern != nil && !errs.match(f.keyPattern, key):
			errs.addString(p.String(), key, "is not a valid key", "keys must match "+f.keyPattern.String())
		case n.values[i].kind != kindString:
			errs.add(p.String(), n.values[i].render(), "must be a string, not "+n.values[i].kind.article(), "quote the value")
		}
	}
}

// keySet finds repeated keys of an object: by scanning the keys before the
// current one for small objects, with a map for large ones.
type keySet struct {
	seen map[string]bool
}

// smallObject is the size up to which keySet scans instead of hashing.
const smallObject = 32

// newKeySet prepares a keySet for an object of n keys.
func newKeySet(n int) keySet {
	if n <= smallObject {
		return keySet{}
	}
	return keySet{seen: make(map[string]bool, n)}
}

// has reports whether key is among before, the keys read so far, and
// records it.
func (k keySet) has(before []string, key string) bool {
	if k.seen == nil {
		return slices.Contains(before, key)
	}
	dup := k.seen[key]
	k.seen[key] = true
	return dup
}

// checkString checks a string value and reports whether it is a string at all.
func checkString(n *node, f *fieldRule, path *jsonPath, errs *checker) bool {
	if n.kind != kindString {
		fix := "quote it, e.g. " + firstExample(f)
		if f.kind == fieldString {
			fix = "write it like " + f.example
		}
		errs.add(path.String(), n.render(), "must be a string, not "+n.kind.article(), fix)
		return false
	}
	switch {
	case len(n.text) < f.minLength || (n.text == "" && f.pattern != nil):
		errs.addString(path.String(), n.text, "must not be empty", "write it like "+firstExample(f))
	case f.pattern != nil && !errs.match(f.pattern, n.text):
		msg := f.mismatch
		if msg == "" {
			msg = "does not have the expected form " + f.pattern.String()
		}
		fix := f.fix
		if fix == "" {
			fix = "write it like " + firstExample(f)
		}
		errs.addString(path.String(), n.text, msg, fix)
	case f.enum != nil && !slices.Contains(f.enum, n.text):
		errs.addString(path.String(), n.text, "unknown "+f.name, "use one of "+quoteAll(f.enum))
	}
	return true
}

// firstExample returns the example of a string, or the first item of a list's.
func firstExample(f *fieldRule) string {
	ex := strings.TrimPrefix(f.example, "[")
	if i := strings.Index(ex, `",`); i >= 0 {
		ex = ex[:i+1]
	}
	return strings.TrimSuffix(ex, "]")
}

// quoteAll writes strings as a quoted, comma-separated list.
func quoteAll(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = quote(s)
	}
	return strings.Join(quoted, ", ")
}

// unknownFieldFix suggests the field that was probably meant.
func unknownFieldFix(key string, rule *objectRule) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestDist := "", 3
	for _, f := range rule.fields {
		if norm(f.name) == norm(key) {
			best, bestDist = f.name, 0
			break
		}
		long := len(key) >= 4 && len(f.name) >= 4
		if long && (strings.HasPrefix(f.name, key) || strings.HasPrefix(key, f.name)) {
			best, bestDist = f.name, 1
			continue
		}
		if d := editDistance(key, f.name); d < bestDist {
			best, bestDist = f.name, d
		}
	}
	if best != "" {
		return "did you mean \"" + best + "\"?"
	}
	names := make([]string, 0, len(rule.fields))
	for _, f := range rule.fields {
		names = append(names, f.name)
	}
	return "remove it; known fields here: " + strings.Join(names, ", ")
}

// editDistance is the Levenshtein distance between two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
