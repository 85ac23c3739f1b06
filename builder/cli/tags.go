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
		values := map[string]string{
			"version": p.Router.Version, "jetpack": rel.JetPack, "l4t": rel.L4T, "cuda": rel.CUDA, "release": rel.Name,
			"sha": revision[:min(12, len(revision))],
		}
		values["jetpack_major"], _, _ = strings.Cut(rel.JetPack, ".")
		for _, tpl := range templates {
			if strings.Contains(tpl, "{sha}") && revision == "" {
				return usageErrorf("--tag %q uses {sha}, but the matrix's folder is not a git work tree: give --revision", tpl)
			}
			tag, err := matrix.ExpandTag(tpl, values)
			if err != nil {
				return usageErrorf("--tag %q %v: use %s", tpl, err, placeholderList())
			}
			if !matrix.ValidTag(tag) {
				return usageErrorf("--tag %q gives %q for %s, which is not a valid tag: use letters, digits, '.', '_' and '-', at most 128", tpl, tag, rel.Name)
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

func placeholderList() string {
	names := append(matrix.Placeholders(), "sha")
	for i, n := range names {
		names[i] = fmt.Sprintf("{%s}", n)
	}
	return strings.Join(names, " ")
}
