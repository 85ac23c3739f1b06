package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// addTags puts the --tag templates on the selected releases of p (all when
// selected is empty). A template takes the matrix's placeholders plus
// {sha}, the first 12 digits of the source revision. A tag that two
// selected releases would both get is refused: it could name only one.
func addTags(p *plan.Plan, templates, selected []string, revision string) error {
	if len(templates) == 0 {
		return nil
	}
	owner := map[string]string{}
	for i := range p.Releases {
		rel := &p.Releases[i]
		if len(selected) > 0 && !slices.Contains(selected, rel.Name) {
			continue
		}
		for _, tpl := range templates {
			tag, err := expandTag("--tag", tpl, p, rel, revision)
			if err != nil {
				return err
			}
			if prev, dup := owner[tag]; dup {
				return usageErrorf("--tag %q gives %q to both %s and %s: add a placeholder such as {jetpack}, or pick one release with --release", tpl, tag, prev, rel.Name)
			}
			owner[tag] = rel.Name
			ref := p.Repository + ":" + tag
			if !slices.Contains(rel.Tags, ref) {
				rel.Tags = append(rel.Tags, ref)
			}
		}
	}
	return nil
}

// expandTag expands a tag template of flag for rel: the matrix's
// placeholders plus {sha}, the first 12 digits of the source revision.
func expandTag(flag, tpl string, p *plan.Plan, rel *plan.Release, revision string) (string, error) {
	values := map[string]string{
		"version": p.Version(), "jetpack": rel.JetPack, "l4t": rel.L4T, "cuda": rel.CUDA, "release": rel.Name,
		"sha": revision[:min(12, len(revision))],
	}
	values["jetpack_major"], _, _ = strings.Cut(rel.JetPack, ".")
	if strings.Contains(tpl, "{sha}") && revision == "" {
		return "", usageErrorf("%s %q uses {sha}, but the matrix's folder is not a git work tree: give --revision", flag, tpl)
	}
	tag, err := matrix.ExpandTag(tpl, values)
	if err != nil {
		return "", usageErrorf("%s %q %v: use %s", flag, tpl, err, placeholderList())
	}
	if !matrix.ValidTag(tag) {
		return "", usageErrorf("%s %q gives %q for %s, which is not a valid tag: use letters, digits, '.', '_' and '-', at most 128 (a tag, not a reference: images go to the matrix's image.repository)", flag, tpl, tag, rel.Name)
	}
	return tag, nil
}

func placeholderList() string {
	names := append(matrix.Placeholders(), "sha")
	for i, n := range names {
		names[i] = fmt.Sprintf("{%s}", n)
	}
	return strings.Join(names, " ")
}
