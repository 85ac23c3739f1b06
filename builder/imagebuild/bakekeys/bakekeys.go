// Package bakekeys writes a build's report with, beside its own keys, the
// keys of `docker buildx bake --metadata-file` for every image built
// (containerimage.digest, image.name, containerimage.descriptor), so that
// pipelines written for bake read it.
package bakekeys

import (
	"encoding/json"
	"strings"
)

// Target is one release's image as bake's metadata names it.
type Target struct {
	// Name is the release's name; Digest its image index's digest, ""
	// when nothing was built.
	Name, Digest string
	// Tags are the references put on the digest; Repository where it was
	// pushed by digest, which names it when it has no tag.
	Tags       []string
	Repository string
	// Node is the BuildKit node that built it.
	Node string
}

// Marshal returns report, a JSON object, with one object per built target
// under its name holding bake's keys; a target whose name is one of the
// report's own keys is left out.
func Marshal(report any, targets []Target) ([]byte, error) {
	data, err := json.Marshal(report)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	for _, t := range targets {
		if t.Digest == "" || doc[t.Name] != nil {
			continue
		}
		names := t.Tags
		if len(names) == 0 && t.Repository != "" {
			names = []string{t.Repository + "@" + t.Digest}
		}
		target := map[string]any{
			"containerimage.digest": t.Digest,
			"containerimage.descriptor": map[string]any{
				"mediaType": "application/vnd.oci.image.index.v1+json",
				"digest":    t.Digest,
			},
		}
		if len(names) > 0 {
			target["image.name"] = strings.Join(names, ",")
		}
		if t.Node != "" {
			target["jetbake.node"] = t.Node
		}
		doc[t.Name] = target
	}
	return json.MarshalIndent(doc, "", "  ")
}
