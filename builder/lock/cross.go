package lock

import (
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// crossPlatform is the platform of every cross build base: the cross
// packages and compilers are x86_64 programs (computecap's crossbase facts).
var crossPlatform = v1.Platform{OS: "linux", Architecture: "amd64"}

// CrossBases lists every release's cross build base once, sorted: the
// amd64 images the router stage cross-compiles in on an amd64 node. The
// lock pins them as it pins the other bases (Bases lists them too), but
// reads nothing of them: what they hold is the cross toolchain, which
// validate checks against the facts table, not a Jetson's CUDA.
func CrossBases(p *plan.Plan) []string {
	var out []string
	for _, r := range p.Releases {
		if r.CrossBuildBase != "" {
			out = append(out, r.CrossBuildBase)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// targetBases lists the bases whose contents the lock reads: every base
// of p but the cross build bases that are nothing else.
func targetBases(p *plan.Plan) []string {
	var out []string
	for _, r := range p.Releases {
		for _, ref := range []string{r.BuildBase, r.RuntimeBase, r.Base} {
			if ref != "" {
				out = append(out, ref)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// crossDigests resolves each cross build base of p that is no other base
// to the digest its tag names now, and checks that it has a linux/amd64
// image: an index that lists one, or an image of that platform.
func crossDigests(p *plan.Plan, resolve Resolver, opts []remote.Option) (map[string]string, error) {
	out := map[string]string{}
	targets := targetBases(p)
	for _, ref := range CrossBases(p) {
		if slices.Contains(targets, ref) {
			continue // pinned, and read, as a base of the target
		}
		fetched, parsed, err := fetchRef(ref, resolve)
		if err != nil {
			return nil, err
		}
		what := "resolve cross build base " + ref + " (as " + fetched + ")"
		desc, err := remote.Get(parsed, opts...)
		if err != nil {
			return nil, refs.DescribeRegistryError(what, err)
		}
		if err := checkCrossPlatform(ref, desc); err != nil {
			return nil, err
		}
		out[ref] = desc.Digest.String()
	}
	return out, nil
}

// checkCrossPlatform checks that desc, ref's index or image, has a
// linux/amd64 image.
func checkCrossPlatform(ref string, desc *remote.Descriptor) error {
	var found []string
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return fmt.Errorf("cross build base %s: %w", ref, err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return fmt.Errorf("cross build base %s: %w", ref, err)
		}
		for _, m := range im.Manifests {
			if m.Platform != nil {
				if m.Platform.Satisfies(crossPlatform) {
					return nil
				}
				found = append(found, m.Platform.String())
			}
		}
	} else {
		img, err := desc.Image()
		if err != nil {
			return fmt.Errorf("cross build base %s: %w", ref, err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return fmt.Errorf("cross build base %s: %w", ref, err)
		}
		if p := cfg.Platform(); p != nil {
			if p.Satisfies(crossPlatform) {
				return nil
			}
			found = append(found, p.String())
		}
	}
	return fmt.Errorf("cross build base %s has no %s image (it has: %v): the router stage cross-compiles on the amd64 node itself; use the cross image built for linux/amd64, or remove cross_build_base",
		ref, crossPlatform.String(), found)
}
