package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/router"
	"github.com/jetbake/jetbake/computecap"
)

// Cache is a BuildKit cache import or export as buildx and buildctl write it
// (type=s3,bucket=B,region=R): the backend and its attributes.
type Cache struct {
	// Type is the backend: registry, local, s3, gha, azblob or inline.
	Type string `json:"type"`
	// Attrs are the backend's attributes, e.g. {"ref": "ghcr.io/acme/cache"}.
	Attrs map[string]string `json:"attrs,omitempty"`
}

// redacted stands for a credential in a printed plan.
const redacted = "(redacted)"

// isCredential reports whether a cache attribute holds a credential: the
// GitHub Actions cache's tokens, the S3 and Azure Blob keys (BuildKit's
// cache/remotecache/gha, s3 and azblob).
func isCredential(attr string) bool {
	switch attr {
	case "token", "ghtoken", "secret_access_key", "session_token":
		return true
	}
	return false
}

// Redacted returns c with every credential attribute replaced by
// "(redacted)": plans are printed in logs, and credentials never reach them.
func (c Cache) Redacted() Cache {
	attrs := maps.Clone(c.Attrs)
	for k := range attrs {
		if isCredential(k) {
			attrs[k] = redacted
		}
	}
	return Cache{Type: c.Type, Attrs: attrs}
}

// MarshalJSON writes the cache with its credentials redacted.
func (c Cache) MarshalJSON() ([]byte, error) {
	type plain Cache
	return json.Marshal(plain(c.Redacted()))
}

// String writes the cache as a flag value, type first and the attributes
// in order, credentials redacted.
func (c Cache) String() string {
	r := c.Redacted()
	fields := []string{"type=" + r.Type}
	for _, k := range slices.Sorted(maps.Keys(r.Attrs)) {
		fields = append(fields, k+"="+r.Attrs[k])
	}
	return strings.Join(fields, ",")
}

// MatchReleases returns the releases of p that pattern names, in plan order:
// the release of that name, else every release whose name path.Match
// matches ("*", "jetpack6.*"), as buildx bake matches the targets of --set.
// A pattern that names no release is an error that lists them.
func (p *Plan) MatchReleases(pattern string) ([]*Release, error) {
	if r, ok := p.Release(pattern); ok {
		return []*Release{r}, nil
	}
	var out []*Release
	for i := range p.Releases {
		ok, err := path.Match(pattern, p.Releases[i].Name)
		if err != nil {
			return nil, fmt.Errorf("release pattern %q is not a pattern: %w; use a release name or '*' and '?', e.g. jetpack6.*", pattern, err)
		}
		if ok {
			out = append(out, &p.Releases[i])
		}
	}
	if len(out) == 0 {
		names := make([]string, len(p.Releases))
		for i, r := range p.Releases {
			names[i] = r.Name
		}
		return nil, fmt.Errorf("no release matches %q: the plan has %s", pattern, strings.Join(names, ", "))
	}
	return out, nil
}

// ReservedBuildArg says why jetbake gives the router stage build arg name
// itself, or "" when the matrix and the command line may set it. These are
// the build args the build adds to every target's own.
func ReservedBuildArg(name string) string {
	switch name {
	case "CUDA_COMPUTE_CAP", "CUDA_ARCH":
		return "jetbake sets it for every SM target: list the SMs in the release's targets instead"
	case "BUILD_BASE", "RUNTIME_BASE":
		return "jetbake sets it from the release's build_base and runtime_base, with the mirrors and the lock applied: change the matrix instead"
	case "ROUTER_VERSION":
		return "jetbake sets it from router.version: change the matrix instead"
	case "CUDA_RELEASE":
		return "jetbake sets it from the release's cuda: change the matrix instead"
	case "SOURCE_DATE_EPOCH":
		return "jetbake sets it from the commit's time: give the build a source date epoch of its own instead"
	}
	return ""
}

// ReservedBuildArgError is a build arg that SetBuildArg refuses because
// jetbake sets it itself (see ReservedBuildArg).
type ReservedBuildArgError struct {
	// Name is the build arg.
	Name string
}

// Error names the build arg, who sets it and the fix.
func (e *ReservedBuildArgError) Error() string { return e.Name + ": " + ReservedBuildArg(e.Name) }

// SetBuildArg gives every router stage of r build arg name=value, over the
// matrix's: the release's build args and each target's. It refuses the
// build args jetbake sets itself (a *ReservedBuildArgError) and cargo
// features that a target's SM cannot compile.
func (r *Release) SetBuildArg(name, value string) error {
	if name == "" {
		return errors.New("the build arg has no name")
	}
	if ReservedBuildArg(name) != "" {
		return &ReservedBuildArgError{Name: name}
	}
	if r.AppBuildArgs != nil {
		return r.setAppBuildArg(name, value)
	}
	if name == router.FeaturesBuildArg {
		for _, t := range r.Targets {
			if err := checkFeatures(t, value); err != nil {
				return fmt.Errorf("release %s, SM %s: %w", r.Name, t.SM, err)
			}
		}
	}
	if r.BuildArgs == nil {
		r.BuildArgs = map[string]string{}
	}
	r.BuildArgs[name] = value
	for i := range r.Targets {
		if r.Targets[i].BuildArgs == nil {
			r.Targets[i].BuildArgs = map[string]string{}
		}
		r.Targets[i].BuildArgs[name] = value
	}
	return nil
}

// checkFeatures applies the rule of router.CheckFeatures to target t,
// naming the features that would compile for it.
func checkFeatures(t Target, features string) error {
	c, err := computecap.Parse(t.SM)
	if err != nil {
		return err
	}
	err = router.CheckFeatures(c, features)
	var fe *router.FeaturesError
	if !errors.As(err, &fe) {
		return err
	}
	if instead := fe.Instead(); len(instead) > 0 {
		return fmt.Errorf("%w; SM %s needs %s", err, t.SM, strings.Join(instead, " or "))
	}
	return err
}
