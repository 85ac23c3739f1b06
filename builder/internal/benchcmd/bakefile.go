package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/imageconfig"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/dockerfiles"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// bakeFile is the subset of buildx's docker-bake.json that the bench writes.
type bakeFile struct {
	Group  map[string]bakeGroup  `json:"group"`
	Target map[string]bakeTarget `json:"target"`
}

// bakeGroup lists the targets `buildx bake` builds by default.
type bakeGroup struct {
	Targets []string `json:"targets"`
}

// bakeTarget is one bake target, with buildx's JSON field names.
type bakeTarget struct {
	Context     string            `json:"context"`
	Dockerfile  string            `json:"dockerfile,omitempty"`
	Target      string            `json:"target,omitempty"`
	Contexts    map[string]string `json:"contexts,omitempty"`
	Platforms   []string          `json:"platforms"`
	Args        map[string]string `json:"args,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations []string          `json:"annotations,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Output      []string          `json:"output,omitempty"`
	Attest      []string          `json:"attest,omitempty"`
}

// bakeInputs is what the bake file needs besides the plan.
type bakeInputs struct {
	// Mirrors rewrites the bases to the local registry, as jetbake's --mirror.
	Mirrors refs.Mirrors
	// EntrypointDir holds the linux/arm64 jetbake-entrypoint, jetbake-cudaprobe and jetbake-probe.
	EntrypointDir string
	// Revision and Epoch are the source revision and SOURCE_DATE_EPOCH, as jetbake gets them.
	Revision string
	Epoch    int64
	// RewriteTimestamp sets rewrite-timestamp=true on the output, which makes
	// bake's images reproducible at the cost of an uncached rewrite of every
	// layer on every export; without it, bake's default.
	RewriteTimestamp bool
	// Cross builds the routers on the cross path, as jetbake's --build-path
	// cross: the router targets stay linux/arm64 and pass the args that
	// start the router stage from Dockerfile-jetson's toolchain-cross stage,
	// which runs on $BUILDPLATFORM in the release's cross build base.
	Cross bool
}

// bakeName turns a release name into a bake target name: bake allows only
// letters, digits, '_' and '-', so "jetpack6.2" becomes "jetpack6_2".
func bakeName(release string) string {
	return strings.NewReplacer(".", "_", "+", "_").Replace(release)
}

// routerTargetName is the bake target that compiles release's router for t.
func routerTargetName(release string, t plan.Target) string {
	return bakeName(release) + "-sm" + t.ComputeCap
}

// routerContextName is the named context a runtime Dockerfile copies t's router from.
func routerContextName(t plan.Target) string { return "router-" + t.ComputeCap }

// entrypointContext is the named context holding the entrypoint binaries.
const entrypointContext = "jetbake-entrypoint"

// newBakeFile describes, for bake, the work jetbake does for p: per release one
// router target per SM target (the router stage of p's Dockerfile) and one
// runtime target that copies every router binary, the entrypoint and
// image.json into the runtime base and pushes it under the release's tags.
// Runtime Dockerfiles and image.json files are returned by the folder they
// must be written to, relative to the bake file's folder.
func newBakeFile(p *plan.Plan, in bakeInputs) (*bakeFile, map[string]map[string][]byte, error) {
	bf := &bakeFile{Group: map[string]bakeGroup{}, Target: map[string]bakeTarget{}}
	// The router stage's `COPY --from=jetbake`: the named context jetbake
	// passes from its embedded files, here a folder beside the bake file.
	files := map[string]map[string][]byte{jetbakeContextDir: dockerfiles.Files()}
	var defaults []string
	for _, rel := range p.Releases {
		buildBase, err := in.Mirrors.Rewrite(rel.BuildBase, "")
		if err != nil {
			return nil, nil, fmt.Errorf("release %s: build_base: %w", rel.Name, err)
		}
		runtimeBase, err := in.Mirrors.Rewrite(rel.RuntimeBase, "")
		if err != nil {
			return nil, nil, fmt.Errorf("release %s: runtime_base: %w", rel.Name, err)
		}
		crossArgs, err := crossArgs(rel, in)
		if err != nil {
			return nil, nil, err
		}
		contexts := map[string]string{entrypointContext: in.EntrypointDir}
		for _, t := range rel.Targets {
			name := routerTargetName(rel.Name, t)
			rt := routerTarget(p, rel, t, buildBase, runtimeBase, in.Epoch)
			maps.Copy(rt.Args, crossArgs)
			bf.Target[name] = rt
			contexts[routerContextName(t)] = "target:" + name
		}
		if p.Router.RuntimeTarget != "" {
			name := bakeName(rel.Name) + "-runtime"
			bf.Target[name] = runtimeStageTarget(p, rel, buildBase, runtimeBase, in.Epoch)
			contexts[runtimeStageContext] = "target:" + name
		}
		desc, err := imageconfig.Description(p, rel, in.Revision)
		if err != nil {
			return nil, nil, err
		}
		dir := bakeName(rel.Name)
		files[dir] = map[string][]byte{"Dockerfile": runtimeDockerfile(p, rel), "image.json": desc}
		bf.Target[bakeName(rel.Name)] = runtimeTarget(rel, dir, contexts, runtimeBase, in)
		defaults = append(defaults, bakeName(rel.Name))
	}
	bf.Group["default"] = bakeGroup{Targets: defaults}
	return bf, files, nil
}

// crossArgs are the router stage's build args of the cross path, as
// jetbake passes them (imagebuild's routerArgs): TOOLCHAIN, the release's
// cross build base with the mirrors applied, and its CUDA target folder;
// none on the QEMU path.
func crossArgs(rel plan.Release, in bakeInputs) (map[string]string, error) {
	if !in.Cross {
		return nil, nil
	}
	if rel.CrossBuildBase == "" {
		return nil, fmt.Errorf("release %s: the cross path needs a cross_build_base", rel.Name)
	}
	base, err := in.Mirrors.Rewrite(rel.CrossBuildBase, "")
	if err != nil {
		return nil, fmt.Errorf("release %s: cross_build_base: %w", rel.Name, err)
	}
	return map[string]string{"TOOLCHAIN": "toolchain-cross", "CROSS_BUILD_BASE": base, "CUDA_TARGET_DIR": rel.CUDATargetDir}, nil
}

// runtimeStageContext is the named context a runtime Dockerfile starts
// from when the router names a runtime stage.
const runtimeStageContext = "jetbake-runtime"

// routerTarget builds the router stage for t with the build args jetbake passes.
func routerTarget(p *plan.Plan, rel plan.Release, t plan.Target, buildBase, runtimeBase string, epoch int64) bakeTarget {
	args := stageArgs(p, rel, buildBase, runtimeBase, epoch, t.BuildArgs)
	if t.BuildArgs == nil {
		maps.Copy(args, rel.BuildArgs)
	}
	args["CUDA_COMPUTE_CAP"], args["CUDA_ARCH"] = t.ComputeCap, t.Arch
	return stageTarget(p, p.Router.Target, args)
}

// runtimeStageTarget builds the router's runtime stage of rel, as jetbake
// does, with the router's and the release's build args.
func runtimeStageTarget(p *plan.Plan, rel plan.Release, buildBase, runtimeBase string, epoch int64) bakeTarget {
	extra := rel.RuntimeBuildArgs
	if extra == nil {
		extra = rel.BuildArgs
	}
	return stageTarget(p, p.Router.RuntimeTarget, stageArgs(p, rel, buildBase, runtimeBase, epoch, extra))
}

// stageArgs are extra, then the build args jetbake passes every stage.
func stageArgs(p *plan.Plan, rel plan.Release, buildBase, runtimeBase string, epoch int64, extra map[string]string) map[string]string {
	args := maps.Clone(extra)
	if args == nil {
		args = map[string]string{}
	}
	if args["GIT_SHA"] == "" && p.Router.Commit != "" {
		args["GIT_SHA"] = p.Router.Commit
	}
	maps.Copy(args, map[string]string{
		"BUILD_BASE":        buildBase,
		"RUNTIME_BASE":      runtimeBase,
		"CUDA_RELEASE":      rel.CUDA,
		"ROUTER_VERSION":    p.Router.Version,
		"SOURCE_DATE_EPOCH": fmt.Sprint(epoch),
	})
	return args
}

// stageTarget builds stage target of the router's Dockerfile with args.
func stageTarget(p *plan.Plan, target string, args map[string]string) bakeTarget {
	dockerfile, _ := routerDockerfile(p)
	return bakeTarget{
		Context:    p.Router.Context,
		Dockerfile: dockerfile,
		Target:     target,
		Contexts:   map[string]string{dockerfiles.ContextName: jetbakeContextDir},
		Platforms:  []string{plan.Platform},
		Args:       args,
	}
}

// routerDockerfile is the router's Dockerfile as the bake file names it:
// relative to the router's context when it is inside it (inContext), its
// absolute path otherwise (the shipped Dockerfile-jetson, outside the TEI
// source).
func routerDockerfile(p *plan.Plan) (path string, inContext bool) {
	dockerfile := p.Router.Dockerfile
	if r, err := filepath.Rel(p.Router.Context, dockerfile); err == nil && filepath.IsAbs(dockerfile) && !strings.HasPrefix(r, "..") {
		return r, true
	}
	return dockerfile, false
}

// bakeGrants are the local paths outside the bake file's folder that its
// targets read, which `buildx bake` reads only when `--allow fs.read=PATH`
// grants them (its filesystem entitlements): the router's context, its
// Dockerfile when it is outside that context, and the entrypoint's folder.
// A user of bake passes the same grants.
func bakeGrants(p *plan.Plan, entrypointDir string) []string {
	grants := []string{p.Router.Context, entrypointDir}
	if dockerfile, inContext := routerDockerfile(p); !inContext {
		grants = append(grants, dockerfile)
	}
	return grants
}

// jetbakeContextDir is the folder, beside the bake file, of the jetbake
// named context.
const jetbakeContextDir = "jetbake-context"

// runtimeTarget assembles and pushes the release's image. BuildKit refuses
// index annotations on a one-platform export, so annotations go on the
// manifest only (jetbake puts them on both).
func runtimeTarget(rel plan.Release, dir string, contexts map[string]string, runtimeBase string, in bakeInputs) bakeTarget {
	labels := maps.Clone(rel.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels["org.opencontainers.image.revision"] = in.Revision
	output := "type=image,push=true,registry.insecure=true,oci-mediatypes=true"
	if in.RewriteTimestamp {
		output += ",rewrite-timestamp=true"
	}
	var annotations []string
	for _, k := range sortedKeys(rel.Annotations) {
		annotations = append(annotations, "manifest:"+k+"="+rel.Annotations[k])
	}
	return bakeTarget{
		Context:     dir,
		Dockerfile:  "Dockerfile",
		Contexts:    contexts,
		Platforms:   []string{plan.Platform},
		Args:        map[string]string{"RUNTIME_BASE": runtimeBase, "SOURCE_DATE_EPOCH": fmt.Sprint(in.Epoch)},
		Labels:      labels,
		Annotations: annotations,
		Tags:        rel.Tags,
		Output:      []string{output},
		Attest:      []string{"type=provenance,disabled=true", "type=sbom,disabled=true"},
	}
}

// assemblyStage names the runtime Dockerfile's one stage, so that its
// steps ("[jetpack6_2 assembly 2/4] COPY ...") are told from those of the
// router's stages that buildx reports under the same target (bakePhases).
const assemblyStage = "assembly"

// runtimeDockerfile copies each router, the entrypoint and image.json into
// the runtime base (the router's runtime stage, when it names one) and sets
// what jetbake sets in the image config.
func runtimeDockerfile(p *plan.Plan, rel plan.Release) []byte {
	var b strings.Builder
	if p.Router.RuntimeTarget != "" {
		b.WriteString("FROM " + runtimeStageContext + " AS " + assemblyStage + "\n")
	} else {
		b.WriteString("ARG RUNTIME_BASE\nFROM ${RUNTIME_BASE} AS " + assemblyStage + "\n")
	}
	for _, t := range rel.Targets {
		fmt.Fprintf(&b, "COPY --from=%s %s %s\n", routerContextName(t), p.Router.Output, t.Path)
	}
	fmt.Fprintf(&b, "COPY --from=%s %s %s %s %s/\n", entrypointContext, filepath.Base(imagebuild.EntrypointPath),
		filepath.Base(imagebuild.CUDAProbePath), filepath.Base(imagebuild.ProbePath), filepath.Dir(imagebuild.EntrypointPath))
	fmt.Fprintf(&b, "COPY image.json %s\n", imagespec.Path)
	fmt.Fprintf(&b, "ENV NVIDIA_REQUIRE_CUDA=\"cuda>=%s\" NVIDIA_DISABLE_REQUIRE=true NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility\n", rel.CUDA)
	fmt.Fprintf(&b, "ENTRYPOINT [%q]\nCMD []\n", imagebuild.EntrypointPath)
	return []byte(b.String())
}

// writeBakeFile writes docker-bake.json and the runtime contexts under dir
// and returns the bake file's path and contents.
func writeBakeFile(dir string, p *plan.Plan, in bakeInputs) (string, *bakeFile, error) {
	bf, files, err := newBakeFile(p, in)
	if err != nil {
		return "", nil, err
	}
	for sub, contents := range files {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return "", nil, err
		}
		for name, data := range contents {
			if err := os.WriteFile(filepath.Join(dir, sub, name), data, 0o644); err != nil {
				return "", nil, err
			}
		}
	}
	data, err := json.MarshalIndent(bf, "", "  ")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "docker-bake.json")
	return path, bf, os.WriteFile(path, data, 0o644)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
