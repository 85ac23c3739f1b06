package matrix

import (
	"errors"
	"fmt"
	"iter"
	"regexp"
	"strings"
	"sync"
)

// Placeholders lists the names a tag template may use in braces, such as
// "{version}-jetpack{jetpack}".
func Placeholders() []string {
	return []string{"version", "jetpack", "jetpack_major", "l4t", "cuda", "release"}
}

// TagValues returns the value of every placeholder for a release:
// {version} the router's version, {jetpack} "6.2", {jetpack_major} "6",
// {l4t} "36.4.3", {cuda} "12.6" and {release} the release's name.
func (m *Matrix) TagValues(r *Release) map[string]string {
	values := make(map[string]string, len(Placeholders()))
	for _, name := range Placeholders() {
		values[name], _ = tagValue(m, r, name)
	}
	return values
}

// tagValue returns the value of one placeholder for a release.
func tagValue(m *Matrix, r *Release, name string) (string, bool) {
	switch name {
	case "version":
		return m.Version(), true
	case "jetpack":
		return r.JetPack, true
	case "jetpack_major":
		major, _, _ := strings.Cut(r.JetPack, ".")
		return major, true
	case "l4t":
		return r.L4T, true
	case "cuda":
		return r.CUDA, true
	case "release":
		return r.Name, true
	}
	return "", false
}

// ExpandTag replaces the placeholders of a tag template with values. An
// unknown placeholder or an unbalanced brace is an error that names it; the
// result is not checked against the OCI tag rules (see ValidTag).
func ExpandTag(template string, values map[string]string) (string, error) {
	return expandTag(template, func(name string) (string, bool) {
		v, ok := values[name]
		return v, ok
	})
}

// expandTag is ExpandTag with a lookup function.
func expandTag(template string, lookup func(string) (string, bool)) (string, error) {
	if !strings.ContainsAny(template, "{}") {
		return template, nil
	}
	var b strings.Builder
	b.Grow(len(template) + 32)
	rest := template
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			b.WriteString(rest)
			break
		}
		if rest[open] == '}' {
			return "", errors.New("has a '}' without a '{'")
		}
		b.WriteString(rest[:open])
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 || rest[open+1+end] == '{' {
			return "", errors.New("has a '{' without a closing '}'")
		}
		name := rest[open+1 : open+1+end]
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("uses the unknown placeholder {%s}", name)
		}
		b.WriteString(v)
		rest = rest[open+1+end+1:]
	}
	return b.String(), nil
}

// ValidTag reports whether s is a valid OCI tag: up to 128 letters, digits,
// '_', '.' and '-', not starting with '.' or '-'. It is tagPattern written
// out, because it runs for every tag of every release.
func ValidTag(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case (c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Tags returns the expanded tags of release i: the image's templates first,
// then the release's own, without the repository.
func (m *Matrix) Tags(i int) ([]string, error) {
	r := &m.Releases[i]
	lookup := func(name string) (string, bool) { return tagValue(m, r, name) }
	templates := append(append([]string{}, m.Image.Tags...), r.Tags...)
	tags := make([]string, 0, len(templates))
	for _, t := range templates {
		tag, err := expandTag(t, lookup)
		if err != nil {
			return nil, fmt.Errorf("release %s: tag template %q %w", r.Name, t, err)
		}
		tags = append(tags, tag)
	}
	return tags, nil
}

// templateRef names one tag template: image.tags[index] when release is
// -1, else releases[release].tags[index].
type templateRef struct {
	release, index int
}

// path writes the template's JSON path.
func (t templateRef) path() string {
	if t.release < 0 {
		return indexPath("image.tags", t.index)
	}
	return indexPath(indexPath("releases", t.release)+".tags", t.index)
}

// tagSource is where an expanded tag came from.
type tagSource struct {
	release  int
	template templateRef
}

// checkTags checks tag templates, the expanded tags and that no two images
// share a tag.
func checkTags(m *Matrix, errs *checker) {
	placeholders := "use " + strings.Join(wrapAll(Placeholders()), " ")
	sample := func(name string) (string, bool) { return tagValue(m, &Release{}, name) }
	bad := make(map[templateRef]bool)
	check := func(ref templateRef, t string) {
		if _, err := expandTag(t, sample); err != nil {
			bad[ref] = true
			errs.addString(ref.path(), t, "tag template "+err.Error(), placeholders)
		}
	}
	for k, t := range m.Image.Tags {
		check(templateRef{release: -1, index: k}, t)
	}
	for i := range m.Releases {
		for k, t := range m.Releases[i].Tags {
			check(templateRef{release: i, index: k}, t)
		}
	}
	expandAll(m, bad, errs)
}

// expandAll expands every good template for every release and reports tags
// that are not valid OCI tags or that two images share, once per template.
// bad holds the templates already reported.
func expandAll(m *Matrix, bad map[templateRef]bool, errs *checker) {
	if m.Version() == "" { // missing or of the wrong form: reported by the schema
		return
	}
	owner := make(map[string]tagSource, len(m.Releases)*(len(m.Image.Tags)+1))
	for i := range m.Releases {
		r := &m.Releases[i]
		if !tagInputsOK(r) {
			continue
		}
		lookup := func(name string) (string, bool) { return tagValue(m, r, name) }
		for ref, template := range templatesOf(m, i) {
			if bad[ref] {
				continue
			}
			tag, _ := expandTag(template, lookup)
			if msg, fix := tagProblem(m, tag, i, owner); msg != "" {
				bad[ref] = true
				errs.addString(ref.path(), template, msg, fix)
				continue
			}
			owner[tag] = tagSource{release: i, template: ref}
		}
	}
}

// tagProblem says what is wrong with the expanded tag of release i and
// how to fix it, or returns empty strings: a tag must be a valid OCI tag
// and no other image's.
func tagProblem(m *Matrix, tag string, i int, owner map[string]tagSource) (message, fix string) {
	valid := ValidTag(tag)
	prev, dup := owner[tag]
	if valid && !dup {
		return "", ""
	}
	here := fmt.Sprintf("for %s (%s)", indexPath("releases", i), m.Releases[i].Name)
	if !valid {
		return fmt.Sprintf("expands to %q %s, which is not a valid OCI tag", tag, here),
			"tags may hold up to 128 letters, digits, '_', '.' and '-', and may not start with '.' or '-'"
	}
	return fmt.Sprintf("expands to %q %s, a tag %s (%s) already has from %s", tag, here,
			indexPath("releases", prev.release), m.Releases[prev.release].Name, prev.template.path()),
		"make every image's tags differ, e.g. with {release} or {jetpack}, or drop the repeated template"
}

// tagInputsOK reports whether the release fields used by placeholders are
// set; the schema check clears and reports malformed ones.
func tagInputsOK(r *Release) bool {
	return r.Name != "" && r.JetPack != "" && r.L4T != "" && r.CUDA != ""
}

// wrapAll puts braces around names.
func wrapAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "{" + n + "}"
	}
	return out
}

// ValidRepository reports whether s is a valid image repository without a
// tag or digest, such as "ghcr.io/jetbake/text-embeddings-router", by the
// rule matrix.schema.json gives image.repository (the distribution
// specification's grammar; go-containerregistry accepts a trailing "/").
func ValidRepository(s string) bool {
	re := repositoryRule()
	return re != nil && re.MatchString(s)
}

// repositoryRule is the pattern of image.repository in the schema.
var repositoryRule = sync.OnceValue(func() *regexp.Regexp {
	c, err := compiledSchema()
	if err != nil {
		return nil
	}
	pattern, _ := c.at("/$defs/image/properties/repository")["pattern"].(string)
	re, _ := regexp.Compile(pattern)
	return re
})

// templatesOf yields the tag templates of release i, the image's first,
// then the release's own, each with where it is written.
func templatesOf(m *Matrix, i int) iter.Seq2[templateRef, string] {
	return func(yield func(templateRef, string) bool) {
		for k, template := range m.Image.Tags {
			if !yield(templateRef{release: -1, index: k}, template) {
				return
			}
		}
		for k, template := range m.Releases[i].Tags {
			if !yield(templateRef{release: i, index: k}, template) {
				return
			}
		}
	}
}
