package imagepick

import (
	"fmt"

	"github.com/jetbake/jetbake/builder/hostfit"
)

// ParseMeta reads what a jetbake image says of itself from its io.jetbake.*
// keys (its annotations, its config labels, or a build report's
// annotations), failing with the key and value that cannot be read.
func ParseMeta(kv map[string]string) (Meta, error) { return parseMeta(kv) }

// Order ranks images for the host h as Pick does, with the same rule and
// preference: it returns the indexes of metas whose verdict is OK, the one
// Pick chooses first. Fleet manifests derive their node affinity from it,
// so that a node gets the release pick would choose for it.
func Order(h hostfit.Host, metas []Meta, rule hostfit.Rule) []int {
	images := make([]image, len(metas))
	index := make(map[string]int, len(metas))
	for i, m := range metas {
		key := fmt.Sprintf("%04d", i) // equal images keep their order
		images[i] = image{digest: key, tags: []string{key}, meta: m}
		index[key] = i
	}
	var out []int
	for _, c := range judge("", h, images, rule) {
		if c.Verdict.OK {
			out = append(out, index[c.Digest])
		}
	}
	return out
}
