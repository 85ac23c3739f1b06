package matrix

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/router"
	"github.com/jetbake/jetbake/computecap"
)

// Label and annotation keys that jetbake sets itself. A matrix may add other
// keys through image.labels and image.annotations but not these.
const (
	KeyTitle      = ocispec.AnnotationTitle
	KeyVersion    = ocispec.AnnotationVersion
	KeySource     = ocispec.AnnotationSource
	KeyRevision   = ocispec.AnnotationRevision
	KeyCreated    = ocispec.AnnotationCreated
	KeyBaseName   = ocispec.AnnotationBaseImageName
	KeyBaseDigest = ocispec.AnnotationBaseImageDigest
	KeyRelease    = "io.jetbake.release"
	KeyJetPack    = "io.jetbake.jetpack"
	KeyL4T        = "io.jetbake.l4t"
	KeyCUDA       = "io.jetbake.cuda"
	KeyUbuntu     = "io.jetbake.ubuntu"
	KeySMTargets  = "io.jetbake.sm-targets"
	KeyTier       = "io.jetbake.tier"
	// KeyAudit is the build-time audit of the router binaries' GPU code,
	// per SM target: "8.7=runs,11.0=runs" (runs, JIT, "no code", or none
	// when a router holds no fat binary; an app image's files may also be
	// "partial", see AuditVerdicts).
	KeyAudit       = "io.jetbake.audit"
	KeyNVIDIACUDA  = "com.nvidia.cuda.version"
	jetbakePrefix  = "io.jetbake."
	buildArgCUDACC = "CUDA_COMPUTE_CAP"
)

// Reserved reports whether jetbake sets a label or annotation key itself:
// the OCI title, version, source, revision, created and base keys,
// com.nvidia.cuda.version and every io.jetbake.* key.
func Reserved(key string) bool {
	switch key {
	case KeyTitle, KeyVersion, KeySource, KeyRevision, KeyCreated, KeyBaseName, KeyBaseDigest, KeyNVIDIACUDA:
		return true
	}
	return strings.HasPrefix(key, jetbakePrefix)
}

// checkRules applies the rules that go beyond the shape of the document:
// pinned sources, unique names and tags, and the JetPack, L4T, CUDA and SM
// facts.
func checkRules(m *Matrix, errs *checker) {
	checkContext(m, errs)
	if m.App != nil {
		checkApp(m.App, errs)
	} else {
		checkOutput(m, errs)
	}
	checkReservedKeys("image.labels", m.Image.Labels, errs)
	checkReservedKeys("image.annotations", m.Image.Annotations, errs)
	names := make(map[string]int, len(m.Releases))
	for i := range m.Releases {
		r := &m.Releases[i]
		path := indexPath("releases", i)
		if j, dup := names[r.Name]; dup && r.Name != "" {
			errs.addString(path+".name", r.Name, "repeats the name of "+indexPath("releases", j),
				"give every release its own name, e.g. \"jetpack"+r.JetPack+"\"")
		} else {
			names[r.Name] = i
		}
		checkJetPack(r, path, errs)
		checkReleaseKind(m, r, path, errs)
		checkTargets(r, path, m.App == nil, errs)
		if m.App != nil {
			checkAppBuildArgs(path+".build_args", r.BuildArgs, errs)
			checkAppBase(m, r, path, errs)
			continue
		}
		checkBuildArgs(path+".build_args", r.BuildArgs, errs)
		checkBases(r, path, errs)
		checkTargetBuildArgs(m, r, path, errs)
	}
	checkBuildArgs("router.build_args", m.Router.BuildArgs, errs)
	for _, sm := range sortedKeys(m.Router.TargetBuildArgs) {
		checkBuildArgs(keyPath("router.target_build_args", sm), m.Router.TargetBuildArgs[sm], errs)
	}
	checkTags(m, errs)
	checkFloatingTags(m, errs)
}

// checkBuildArgs refuses build args that jetbake sets itself, and a
// CUDA_LINKING that is not one of TEI's linking modes.
func checkBuildArgs(path string, args map[string]string, errs *checker) {
	if v, ok := args[buildArgCUDACC]; ok {
		errs.addString(keyPath(path, buildArgCUDACC), v,
			"is set by jetbake for every SM target", "remove it: list the SMs in targets instead")
	}
	if v, ok := args[router.LinkingBuildArg]; ok {
		if err := router.CheckLinking(v); err != nil {
			errs.addString(keyPath(path, router.LinkingBuildArg), v, err.Error(),
				`set it to "static-linking" (only the driver needed at run time, as TEI's own images) or "dynamic-linking", or remove it`)
		}
	}
}

// checkTargetBuildArgs checks the release's per-target build args and that
// the cargo features each target gets can compile for it.
func checkTargetBuildArgs(m *Matrix, r *Release, path string, errs *checker) {
	for _, sm := range sortedKeys(r.TargetBuildArgs) {
		p := keyPath(path+".target_build_args", sm)
		checkBuildArgs(p, r.TargetBuildArgs[sm], errs)
		if !slices.ContainsFunc(r.Targets, func(c computecap.Capability) bool { return c.String() == sm }) {
			errs.addString(p, sm, "is not one of the release's targets",
				"write the target as it is in targets ("+quoteCaps(r.Targets)+"), or remove it")
		}
	}
	for j, c := range r.Targets {
		if c.IsZero() {
			continue
		}
		t := c.String()
		features := m.TargetBuildArgs(r, c)[router.FeaturesBuildArg]
		var fe *router.FeaturesError
		if !errors.As(router.CheckFeatures(c, features), &fe) {
			continue
		}
		fix := "remove it from this release"
		if instead := fe.Instead(); len(instead) > 0 {
			fix = fmt.Sprintf(`set "target_build_args": {%q: {%q: %q}} in this release or in router, or remove it from this release`,
				t, router.FeaturesBuildArg, instead[0])
		}
		errs.addString(indexPath(path+".targets", j), t, fe.Error(), fix)
	}
}

// sortedKeys returns a map's keys in order, for errors in a stable order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkReservedKeys reports extra labels or annotations that would replace
// the ones jetbake sets.
func checkReservedKeys(path string, kv map[string]string, errs *checker) {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		if Reserved(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		errs.addString(keyPath(path, k), kv[k], "is set by jetbake from the matrix",
			"remove it; jetbake writes the OCI title, version, source, revision, created and base keys, "+
				KeyNVIDIACUDA+" and every "+jetbakePrefix+"* key")
	}
}

// checkTargets checks that no two targets name the same GPU and, when
// compiled (a router's), that the release's CUDA can build each.
func checkTargets(r *Release, path string, compiled bool, errs *checker) {
	cuda, err := computecap.ParseCUDAVersion(r.CUDA)
	cudaOK := err == nil && compiled
	seen := make(map[computecap.Capability]int, len(r.Targets))
	for j, c := range r.Targets {
		if c.IsZero() {
			continue
		}
		t := c.String()
		p := indexPath(path+".targets", j)
		if k, dup := seen[c.Canonical()]; dup {
			if r.Targets[k] != c {
				errs.addString(p, t, "is the same GPU as "+indexPath(path+".targets", k)+" ("+r.Targets[k].String()+
					"): Thor reports 10.1 or 11.0 depending on its driver", "keep only \"11.0\"")
			}
			continue
		}
		seen[c.Canonical()] = j
		if !cudaOK {
			continue
		}
		if err := errs.facts().CanCompile(c, cuda); err != nil {
			errs.addString(p, t, err.Error(), compileFix(errs.facts(), errs.jetPackReleases(), c))
		}
	}
}

// compileFix suggests a CUDA version or target that works.
func compileFix(t *computecap.Table, rows []computecap.JetPackRelease, c computecap.Capability) string {
	if t.Canonical(c) == (computecap.Capability{Major: 11}) {
		return "build \"11.0\" in a release with CUDA 13.0 or later (JetPack 7)"
	}
	var fits []string
	for _, row := range rows {
		if hasSM(row.Capabilities, c) && t.CanCompile(c, row.CUDA) == nil {
			fits = append(fits, "JetPack "+row.JetPack+" (CUDA "+row.CUDA.String()+")")
		}
	}
	if len(fits) == 0 {
		return "remove it from this release"
	}
	return "remove it from this release, or build it in a release for " + strings.Join(fits, ", ")
}
