// Package plan resolves a validated matrix into the concrete work of a build:
// per release the platform, base images, SM targets, binary names, tags,
// labels and annotations, as `buildx bake --print` shows its targets.
package plan

import "github.com/jetbake/jetbake/computecap"

// Platform is the OCI platform of every Jetson image.
const Platform = "linux/arm64"

// Plan is the resolved matrix.
type Plan struct {
	// Router is the program compiled into every image; zero (and left out
	// of the JSON) in an app's plan.
	Router Router `json:"router,omitzero"`
	// App is the app built on each release's framework container; nil in
	// a router's plan.
	App *App `json:"app,omitempty"`
	// Repository is the image repository, e.g. "ghcr.io/jetbake/text-embeddings-router".
	Repository string `json:"repository"`
	// Releases are the releases selected for this plan, in matrix order.
	Releases []Release `json:"releases"`
}

// Router says where the router's source is and how its build stage is named.
type Router struct {
	// Name is the router binary's name, e.g. "text-embeddings-router".
	Name string `json:"name"`
	// Version is the router's version, used in tags and annotations.
	Version string `json:"version"`
	// Context is a local folder (resolved to an absolute path) or a git URL pinned to a tag or commit.
	Context string `json:"context"`
	// Dockerfile is the Dockerfile's path, relative to the matrix file's folder once resolved to an absolute path.
	Dockerfile string `json:"dockerfile"`
	// Target is the Dockerfile stage that compiles one router binary for ARG CUDA_COMPUTE_CAP.
	Target string `json:"target"`
	// RuntimeTarget is the Dockerfile stage, FROM ${RUNTIME_BASE}, that
	// every release's image is assembled on; "" assembles on the runtime base.
	RuntimeTarget string `json:"runtime_target,omitempty"`
	// Commit is the router source's commit when Context is a git URL
	// pinned to one (checksum=, or a commit as ref): the build passes it
	// as GIT_SHA, which TEI's /info reports.
	Commit string `json:"commit,omitempty"`
	// Output is the path of the compiled binary inside the Target stage.
	Output string `json:"output"`
	// Smoke is the router's argument list for a smoke test, e.g. ["--version"].
	Smoke []string `json:"smoke,omitempty"`
	// Env is the runtime image's environment from router.env, e.g. {"PORT": "80"}.
	Env map[string]string `json:"env,omitempty"`
	// Cmd is the image's default arguments (CMD), which `docker run IMAGE ARGS...` replaces.
	Cmd []string `json:"cmd,omitempty"`
	// Ports are the ports the image exposes, e.g. ["80/tcp"].
	Ports []string `json:"ports,omitempty"`
}

// Release is one image to build.
type Release struct {
	// Name is the release's unique name, e.g. "jetpack6.2".
	Name string `json:"name"`
	// JetPack, L4T, CUDA and Ubuntu are the release's versions.
	JetPack string `json:"jetpack"`
	L4T     string `json:"l4t"`
	CUDA    string `json:"cuda"`
	Ubuntu  string `json:"ubuntu"`
	// Tier is the support tier: supported, candidate, evaluate-later or legacy.
	Tier string `json:"tier"`
	// Facts is matrix.FactsDeclared when the release rests on facts the
	// matrix declares rather than on jetbake's table; "" otherwise.
	Facts string `json:"facts,omitempty"`
	// FactsNote says which declared facts, for messages: "rests on
	// declared facts (JetPack 7.3, in jetson-facts.json)".
	FactsNote string `json:"facts_note,omitempty"`
	// DeclaredFacts are the matrix's declared rows when Facts is set: the
	// image's description carries them, so that its entrypoint decides
	// with them.
	DeclaredFacts *computecap.Facts `json:"declared_facts,omitempty"`
	// Hardware names the Jetson modules the release is for.
	Hardware []string `json:"hardware"`
	// Platform is always Platform.
	Platform string `json:"platform"`
	// BuildBase is the image the router is compiled in (routers only).
	BuildBase string `json:"build_base,omitempty"`
	// RuntimeBase is the image the runtime image starts from (routers only).
	RuntimeBase string `json:"runtime_base,omitempty"`
	// CrossBuildBase is the amd64 image the router cross-compiles in on an
	// amd64 node, and CUDATargetDir its CUDA folder ("aarch64-linux");
	// empty builds under QEMU there (routers only).
	CrossBuildBase string `json:"cross_build_base,omitempty"`
	CUDATargetDir  string `json:"cuda_target_dir,omitempty"`
	// CrossBuildRecipe, when set, builds the cross build base on the
	// build platform from CrossBuildBase, NVIDIA's amd64 CUDA devel image
	// (the recipe's CUDA_DEVEL_IMAGE): nil for a prebuilt image.
	CrossBuildRecipe *CrossRecipe `json:"cross_build_recipe,omitempty"`
	// BuildPath is the path the matrix forces on amd64 nodes, "cross" or
	// "qemu"; "" chooses (imagebuild/emulation.ChoosePath).
	BuildPath string `json:"build_path,omitempty"`
	// Base is an app release's framework container, as the matrix names it
	// (the build applies mirrors and lock pins).
	Base string `json:"base,omitempty"`
	// Flavour is the CUDA build the release's JetPack line runs: "tegra"
	// (JetPack 6 and earlier) or "sbsa" (JetPack 7 and later); "" when the
	// table does not know the JetPack (a plan made by hand).
	Flavour computecap.Flavour `json:"flavour,omitempty"`
	// Bases are the build and runtime bases with what the table of Jetson
	// facts tells of them.
	Bases []Base `json:"bases,omitempty"`
	// Targets are the SM targets, one router binary each; an app's are the
	// GPUs its image must run on, each with the app's command as its path.
	Targets []Target `json:"targets"`
	// Tags are full image references, repository included.
	Tags []string `json:"tags"`
	// BuildArgs are the release's own build args (release.build_args).
	// Each target's BuildArgs are what its router stage gets.
	BuildArgs map[string]string `json:"build_args,omitempty"`
	// AppBuildArgs are what an app's stage gets: jetbake's (BASE, JETPACK,
	// L4T, CUDA, CUDA_ARCH_LIST), then app.build_args, then the release's.
	AppBuildArgs map[string]string `json:"app_build_args,omitempty"`
	// RuntimeBuildArgs are what the runtime stage (Router.RuntimeTarget)
	// gets besides jetbake's own: router.build_args, then the release's.
	RuntimeBuildArgs map[string]string `json:"runtime_build_args,omitempty"`
	// Labels go on the image config.
	Labels map[string]string `json:"labels"`
	// Annotations go on the manifest and the index.
	Annotations map[string]string `json:"annotations"`
	// CacheFrom and CacheTo, when not nil, are the release's cache imports
	// and exports in place of the build's --cache-from and --cache-to
	// (--set RELEASE.cache-from=...). The build still gives each a scope of
	// the release's own.
	CacheFrom []Cache `json:"cache_from,omitempty"`
	CacheTo   []Cache `json:"cache_to,omitempty"`
	// NoCache, when not nil, says whether the release is built without
	// BuildKit's cache, over --no-cache (--set RELEASE.no-cache=true).
	NoCache *bool `json:"no_cache,omitempty"`
}

// Target is one SM target of a release.
type Target struct {
	// SM is the compute capability as "8.7".
	SM string `json:"sm"`
	// Arch is the nvcc architecture this release's CUDA calls it, e.g. "sm_87", or "sm_101" under CUDA 12.8.
	Arch string `json:"arch"`
	// ComputeCap is the value passed as build arg CUDA_COMPUTE_CAP, e.g. "87".
	ComputeCap string `json:"compute_cap"`
	// Binary is the binary's file name in the image, e.g. "router-87".
	Binary string `json:"binary"`
	// Path is the binary's absolute path in the image, e.g. "/usr/local/bin/router-87".
	Path string `json:"path"`
	// BuildArgs are passed to this target's router stage besides jetbake's
	// own (CUDA_COMPUTE_CAP, ...): the router's, the router's for this SM,
	// the release's and the release's for this SM, each over the ones before.
	BuildArgs map[string]string `json:"build_args,omitempty"`
}

// CrossRecipe is a release's cross build recipe: the Dockerfile and its
// build arguments (the table's for the release, then the matrix's).
type CrossRecipe struct {
	// Dockerfile is the recipe's path, resolved against the matrix file's
	// folder, or "jetbake" (matrix.BuiltinRecipe) for jetbake's own.
	Dockerfile string `json:"dockerfile"`
	// Args are its build arguments; CUDA_DEVEL_IMAGE is the release's
	// CrossBuildBase.
	Args map[string]string `json:"args"`
}
