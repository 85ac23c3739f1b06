package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/builder/internal/e2e"
)

// shippedSize names the matrix.json of the checkout (its releases as
// shipped, with the stand-in router) in -sizes.
const shippedSize = "shipped"

// size is one matrix the bench builds: the shipped one, or a synthetic
// matrix of n releases.
type size struct {
	name     string
	releases int // 0 for the shipped matrix
}

func (s size) String() string {
	if s.releases == 0 {
		return "shipped matrix"
	}
	if s.releases == 1 {
		return "synthetic matrix of 1 release"
	}
	return fmt.Sprintf("synthetic matrix of %d releases", s.releases)
}

// parseSizes parses -sizes: "shipped" and release counts, comma-separated.
func parseSizes(v string) ([]size, error) {
	var out []size
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == shippedSize {
			out = append(out, size{name: f})
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 500 {
			return nil, fmt.Errorf("-sizes %q: %q is neither %q nor a release count from 1 to 500", v, f, shippedSize)
		}
		out = append(out, size{name: f, releases: n})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-sizes %q: name at least one matrix, e.g. %s,20", v, shippedSize)
	}
	return out, nil
}

// syntheticTemplates are the shipped releases synthetic ones are cloned
// from: both have two SM targets (Xavier and Orin on JetPack 5.1, Orin and
// Thor on JetPack 7.2).
var syntheticTemplates = []string{"jetpack5.1", "jetpack7.2"}

// writeMatrix writes the matrix of s for registry at out.
func writeMatrix(root, registry, out string, s size) error {
	if s.releases == 0 {
		return e2e.WriteDemoMatrix(root, registry, out)
	}
	return e2e.WriteDemoMatrix(root, registry, out, synthesize(s.releases))
}

// synthesize replaces the matrix's releases with n clones of the
// templates, as a pipeline with many routers and JetPack lines would have.
// Each clone gets its own build base tag (its own stand-in, so its router
// builds are its own work, as another router's would be), its own name and
// one tag; runtime bases stay shared, as they are between routers of one
// JetPack line.
func synthesize(n int) func(m map[string]any) {
	return func(m map[string]any) {
		byName := map[string]map[string]any{}
		for _, r := range m["releases"].([]any) {
			rel := r.(map[string]any)
			byName[rel["name"].(string)] = rel
		}
		releases := make([]any, n)
		for i := range n {
			tmpl := byName[syntheticTemplates[i%len(syntheticTemplates)]]
			rel := map[string]any{}
			for k, v := range tmpl {
				rel[k] = v
			}
			rel["name"] = fmt.Sprintf("s%03d-%s", i, tmpl["name"])
			rel["build_base"] = fmt.Sprintf("%s-s%03d", tmpl["build_base"], i)
			rel["tags"] = []any{}
			releases[i] = rel
		}
		m["releases"] = releases
		m["image"].(map[string]any)["tags"] = []any{"{version}-{release}"}
	}
}
