package tei

import (
	"fmt"
	"slices"
	"strings"
)

// Resolution is what cargo's feature resolver enabled for one package.
type Resolution struct {
	// Features are the package's enabled features, sorted.
	Features []string
	// Deps are its enabled optional dependencies.
	Deps map[string]bool
	// DepFeatures are the features enabled on each dependency, sorted.
	DepFeatures map[string][]string
}

// FeatureRequest is what the command line asks for.
type FeatureRequest struct {
	// Features are the values of every -F/--features, split on commas and
	// spaces as cargo splits them.
	Features []string
	// NoDefault is --no-default-features; All is --all-features.
	NoDefault, All bool
}

// SplitFeatures splits one -F value as cargo does: on commas and
// whitespace, empty parts dropped.
func SplitFeatures(value string) []string {
	return strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// UnknownFeaturesError is cargo's refusal of features no selected package has.
type UnknownFeaturesError struct {
	// Names are the unknown features, in the order given.
	Names []string
}

func (e *UnknownFeaturesError) Error() string {
	word := "these features"
	if len(e.Names) == 1 {
		word = "this feature"
	}
	return fmt.Sprintf("none of the selected packages contains %s: %s", word, strings.Join(e.Names, ", "))
}

// Resolve enables features of m as cargo does: "default" unless
// --no-default-features, every requested feature, then what each enabled
// feature lists, transitively: another feature, "dep:NAME" (an optional
// dependency), "NAME/FEATURE" (a dependency's feature, enabling an
// optional dependency), "NAME?/FEATURE" (a dependency's feature only if
// that dependency is enabled anyway), and a bare optional dependency's
// name. Requested features the package lacks fail as cargo fails.
func Resolve(m *Manifest, req FeatureRequest) (Resolution, error) {
	r := resolver{m: m, optional: m.OptionalDeps(), features: map[string]bool{}, deps: map[string]bool{},
		depFeatures: map[string]map[string]bool{}, weak: map[string][]string{}}
	var queue []string
	if req.All {
		for name := range m.Features {
			queue = append(queue, name)
		}
		slices.Sort(queue)
	}
	if !req.NoDefault {
		if _, ok := m.Features["default"]; ok {
			queue = append(queue, "default")
		}
	}
	var unknown []string
	for _, f := range req.Features {
		if dep, feat, ok := strings.Cut(f, "/"); ok {
			queue = append(queue, dep+"/"+feat)
			continue
		}
		if _, ok := m.Features[f]; !ok && !slices.Contains(r.optional, f) && !slices.Contains(unknown, f) {
			unknown = append(unknown, f)
			continue
		}
		queue = append(queue, f)
	}
	if len(unknown) > 0 {
		return Resolution{}, &UnknownFeaturesError{Names: unknown}
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		queue = append(queue, r.enable(f)...)
	}
	r.applyWeak()
	return r.result(), nil
}

// resolver holds the state of one Resolve.
type resolver struct {
	m           *Manifest
	optional    []string
	features    map[string]bool
	deps        map[string]bool
	depFeatures map[string]map[string]bool
	weak        map[string][]string // dep -> features wanted if it is enabled
}

// enable turns on one entry of a feature list and returns the features it implies.
func (r *resolver) enable(entry string) []string {
	switch dep, feat, isDep := strings.Cut(entry, "/"); {
	case strings.HasPrefix(entry, "dep:"):
		r.deps[strings.TrimPrefix(entry, "dep:")] = true
	case isDep && strings.HasSuffix(dep, "?"):
		dep = strings.TrimSuffix(dep, "?")
		r.weak[dep] = append(r.weak[dep], feat)
	case isDep:
		if slices.Contains(r.optional, dep) {
			r.deps[dep] = true
		}
		r.addDepFeature(dep, feat)
	case r.features[entry]:
	default:
		if _, ok := r.m.Features[entry]; ok {
			r.features[entry] = true
			return slices.Clone(r.m.Features[entry])
		}
		if slices.Contains(r.optional, entry) {
			r.deps[entry] = true
		}
	}
	return nil
}

func (r *resolver) addDepFeature(dep, feat string) {
	if r.depFeatures[dep] == nil {
		r.depFeatures[dep] = map[string]bool{}
	}
	r.depFeatures[dep][feat] = true
}

// applyWeak adds the "NAME?/FEATURE" features of the dependencies that are enabled.
func (r *resolver) applyWeak() {
	for dep, feats := range r.weak {
		if slices.Contains(r.optional, dep) && !r.deps[dep] {
			continue
		}
		for _, f := range feats {
			r.addDepFeature(dep, f)
		}
	}
}

func (r *resolver) result() Resolution {
	out := Resolution{Deps: r.deps, DepFeatures: map[string][]string{}}
	for f := range r.features {
		out.Features = append(out.Features, f)
	}
	slices.Sort(out.Features)
	for dep, feats := range r.depFeatures {
		for f := range feats {
			out.DepFeatures[dep] = append(out.DepFeatures[dep], f)
		}
		slices.Sort(out.DepFeatures[dep])
	}
	return out
}

// DepEnabled reports whether dependency dep of the package is built: a
// non-optional dependency always, an optional one when enabled.
func (res Resolution) DepEnabled(m *Manifest, dep string) bool {
	if _, ok := m.Dependencies[dep]; !ok {
		return false
	}
	return !slices.Contains(m.OptionalDeps(), dep) || res.Deps[dep]
}

// HasDepFeature reports whether feature feat of dependency dep is enabled.
func (res Resolution) HasDepFeature(dep, feat string) bool {
	return slices.Contains(res.DepFeatures[dep], feat)
}
