package main

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/standin"
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

// Build paths of the routers on this amd64 machine (-paths): the build
// base under QEMU, as before issue 42, or cross-compiled on the build
// platform in the release's cross build base.
const (
	pathQEMU  = "qemu"
	pathCross = "cross"
)

// buildPaths are the paths the bench knows, in the tables' order.
var buildPaths = []string{pathQEMU, pathCross}

// parsePaths parses -paths: qemu and cross, comma-separated, in the order of buildPaths.
func parsePaths(v string) ([]string, error) {
	given := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f != pathQEMU && f != pathCross {
			return nil, fmt.Errorf("-paths %q: unknown build path %q; use %s, %s or both", v, f, pathQEMU, pathCross)
		}
		given[f] = true
	}
	var out []string
	for _, p := range buildPaths {
		if given[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// writeMatrix writes the matrix of s for registry at out. On the cross
// path every router release gets a cross build base (the test bed's
// stand-in, pushed with the other bases); the QEMU path's matrix is the
// shipped one, without.
func writeMatrix(root, registry, out string, s size, path string) error {
	var edits []func(m map[string]any)
	var crossErr error
	if path == pathCross {
		edits = append(edits, func(m map[string]any) { crossErr = standin.AddCrossBases(m, registry) })
	}
	if s.releases > 0 {
		edits = append(edits, synthesize(s.releases))
	}
	if err := e2e.WriteDemoMatrix(root, registry, out, edits...); err != nil {
		return err
	}
	if crossErr != nil {
		return fmt.Errorf("cross build bases of the %s: %w", s, crossErr)
	}
	return nil
}

// synthesize replaces the matrix's releases with n clones of the
// templates, as a pipeline with many routers and JetPack lines would have.
// Each clone gets its own build base tag (its own stand-in, so its router
// builds are its own work, as another router's would be), its own name and
// one tag; runtime bases stay shared, as they are between routers of one
// JetPack line. A template's cross build base is cloned the same way, with
// its own tag, so that on the cross path too each clone's toolchain is its
// own work.
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
			if cross, ok := tmpl["cross_build_base"].(map[string]any); ok {
				clone := maps.Clone(cross)
				clone["image"] = fmt.Sprintf("%s-s%03d", cross["image"], i)
				rel["cross_build_base"] = clone
			}
			rel["tags"] = []any{}
			releases[i] = rel
		}
		m["releases"] = releases
		m["image"].(map[string]any)["tags"] = []any{"{version}-{release}"}
	}
}
