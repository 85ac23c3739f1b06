package imagebuild

import (
	"context"
	"fmt"
	"maps"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imagebuild/appstage"
	"github.com/jetbake/jetbake/builder/imagebuild/assembly"
	"github.com/jetbake/jetbake/builder/imagebuild/basereads"
	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/crossrecipe"
	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/imagebuild/dockerconvert"
	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
	"github.com/jetbake/jetbake/builder/imagebuild/imageconfig"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/resolvecache"
	"github.com/jetbake/jetbake/builder/imagebuild/routergit"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/dockerfiles"
)

// Local names of the session's file systems in one release's build.
const (
	localContext    = "context"
	localDockerfile = "dockerfile"
	localEntrypoint = "jetbake-entrypoint"
)

// releaseJob is everything one release's BuildKit session needs, resolved
// before the session starts: refs with mirrors and lock digests applied.
// Its own fields are the inputs; buildShared is what every release of the
// build shares, attemptResult what the latest attempt learnt.
type releaseJob struct {
	// The inputs: set when the job is made (see prepare), never changed.
	plan        *plan.Plan
	release     plan.Release
	buildBase   string
	runtimeBase string
	// crossBase is the release's cross build base, mirrored and pinned as
	// the other bases are; "" when the matrix gives none.
	crossBase  string
	gitContext string // the router's git context, or "" for a local folder
	dockerfile string // the Dockerfile's name inside localDockerfile
	// opts are the Builder's options, read where they are needed, never
	// copied (see options.go).
	opts *options
	// contextDir and dockerfileDir are the local folders of the router's
	// context (empty for a git context) and Dockerfile.
	contextDir    string
	dockerfileDir string
	// multiOutput is set when several releases share one --output destination.
	multiOutput bool
	// git is the build's git context (see gitsource.go), nil for a local
	// folder.
	git *routergit.Source

	buildShared
	attemptResult
}

// buildShared is what every release of a build shares, set once by Build
// before the first attempt.
type buildShared struct {
	// timings records jetbake's own calls; resolved is the build's one
	// resolve per base reference, shared by every release; emulation warns
	// once that a router compiles under emulation.
	timings   *progress.Recorder
	resolved  *resolvecache.Cache
	emulation *emulation.Notice
	// say says a line in the build's display (each release's build path,
	// a remembered verdict); warn a warning.
	say, warn func(format string, args ...any)
	// bases are the build's reads of what each base holds; appBases of
	// what each app's framework container holds.
	bases    *basereads.Reads
	appBases *appstage.Bases
}

// attemptResult is what the release's latest attempt learnt, for its
// report: set while the attempt builds, read by fillReport. mu guards what
// the attempt's concurrent steps write.
type attemptResult struct {
	// routerContextPinned and routerSource are what this release resolved
	// the git context to, gitErr why it could not.
	routerContextPinned string
	routerSource        *RouterSource
	gitErr              error
	// baseInfo is what this release's build and runtime bases were read to
	// hold; baseErr what they lack.
	baseInfo [2]*baseinfo.Info
	baseErr  error
	// appErr is why an app's image failed its checks (checkApp).
	appErr error

	mu          sync.Mutex
	buildDigest string
	baseDigest  string
	annotations map[string]string
	// findings are the Dockerfile checks' findings of the latest attempt.
	lintFindings []dockercheck.Finding
	// emulated and buildPlatform say whether the latest attempt's node
	// compiles the routers under emulation, and its native platform.
	emulated      *bool
	buildPlatform string
	// path is the router stage's path on the latest attempt's node;
	// pathSaid whether it was said (once per release).
	path     emulation.Choice
	pathSaid bool
	// binaries are what the smoke run read from the router binaries.
	binaries []smoke.Binary
	// routerCode and libraryCode are the GPU code the audit read of the
	// routers and of the libraries they load; audit its result.
	routerCode  []buildaudit.Code
	libraryCode []buildaudit.Code
	audit       []buildaudit.Audit
	// verdictKey is the key of the inputs of the smoke run and the audit,
	// when the build remembers verdicts; remembered is set when they were
	// not run, their verdict remembered under it (see verdict.go).
	verdictKey string
	remembered *RememberedVerdict
}

// arm64Platform is the platform of every Jetson image.
func arm64Platform() ocispecs.Platform { return ocispecs.Platform{OS: "linux", Architecture: "arm64"} }

// build is the release's gateway build. It solves the router stage once
// per SM target through the Dockerfile frontend, all at once so that BuildKit
// shares what the targets have in common (the build base, the steps before
// CUDA_COMPUTE_CAP is used), then assembles the runtime image in LLB from the
// runtime base, every router binary, the entrypoint and image.json.
//
// A gateway build rather than named contexts, because a Dockerfile cannot
// loop over a release's variable list of SM targets, and because one session
// per release lets the targets run in parallel while the release stays one
// unit that succeeds or fails (and is tagged) as a whole.
//
// The smoke run (see smokeRun) is solved before the image is returned for
// export, unless deferSmoke is given: it then gets the run, to solve
// beside the export in a build of its own, and the release fails if it
// fails, before anything is tagged. Neither the smoke run nor the audit
// runs when the build remembers their passing verdict for the same routers,
// runtime image and jetbake (see verdict.go): a step in the daemon digests
// the routers and the runtime stage's files before either starts.
func (j *releaseJob) build(node string, deferSmoke func(*smokeRun)) gateway.BuildFunc {
	return func(ctx context.Context, c gateway.Client) (*gateway.Result, error) {
		if err := j.notePath(node, c.BuildOpts().Workers); err != nil {
			return nil, err
		}
		if j.isApp() {
			return j.buildApp(ctx, c)
		}
		return j.buildImage(ctx, c, deferSmoke)
	}
}

// buildImage is build's gateway build function.
func (j *releaseJob) buildImage(ctx context.Context, c gateway.Client, deferSmoke func(*smokeRun)) (*gateway.Result, error) {
	// The runtime base is resolved while the routers' Dockerfiles are solved.
	var baseDigest string
	var baseConfig []byte
	eg, egCtx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) {
		baseDigest, baseConfig, err = j.resolveBase(egCtx, c, "runtime", j.runtimeBase)
		return err
	})
	var buildDigest string
	var routers []llb.State
	eg.Go(func() (err error) {
		if buildDigest, _, err = j.resolveBase(egCtx, c, "build", j.buildBase); err != nil {
			return err
		}
		// Nothing is compiled on bases that do not fit the release.
		if err := j.checkBases(egCtx); err != nil {
			return err
		}
		routers, err = j.solveRouters(egCtx, c, pin(j.buildBase, buildDigest))
		return err
	})
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	buildBase := pin(j.buildBase, buildDigest)
	image, err := j.runtimeBaseImage(ctx, c, buildBase, pin(j.runtimeBase, baseDigest), baseConfig)
	if err != nil {
		return nil, err
	}
	desc, err := imageconfig.Description(j.plan, j.release, j.opts.revision)
	if err != nil {
		return nil, err
	}
	st := j.runtimeState(c, image, routers, desc)
	// The --cache-from imports the frontend used to apply go with every
	// solve of the routers converted in jetbake.
	imports, err := dockerconvert.CacheImports(c)
	if err != nil {
		return nil, err
	}
	run, err := j.newSmokeRun(ctx, c, image, routers, buildBase, imports)
	if err != nil {
		return nil, err
	}
	// The runtime stage's steps and the smoke run's driver stub build
	// beside the routers that the verdict's key and the audit wait for.
	var stage []llb.State
	if image.base != nil {
		stage = append(stage, image.state)
	}
	if run != nil {
		stage = append(stage, run.stub)
	}
	var audit string
	err = j.beside(ctx, c, imports, routers, func(ctx context.Context) error {
		readers, err := j.openRouters(ctx, c, routers, imports)
		if err != nil {
			return err
		}
		annotation, ok, err := j.recallVerdict(ctx, c, routers, image, pin(j.runtimeBase, baseDigest), buildBase, imports)
		if err != nil || ok {
			audit = annotation
			return err
		}
		if run != nil && deferSmoke != nil {
			deferSmoke(run)
		} else if run != nil {
			if err := j.smokeCheck(ctx, c, run); err != nil {
				return err
			}
		}
		audit, err = j.auditRouters(readers)
		return err
	}, stage...)
	if err != nil {
		return nil, err
	}
	def, err := st.Marshal(ctx, llb.Platform(arm64Platform()))
	if err != nil {
		return nil, fmt.Errorf("marshal runtime image: %w", err)
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), CacheImports: imports})
	if err != nil {
		return nil, fmt.Errorf("assemble runtime image: %w", err)
	}
	ref, err := res.SingleRef()
	if err != nil {
		return nil, err
	}
	meta := imageconfig.Metadata(j.release, j.opts.revision, epochTime(j.opts.epoch), j.release.RuntimeBase, baseDigest)
	if j.opts.toolVersion != "" {
		meta[KeyToolVersion] = j.opts.toolVersion
	}
	meta[matrix.KeyAudit] = audit
	config, err := imageconfig.Router(image.config, EntrypointPath, j.plan.Router, j.release, meta, epochTime(j.opts.epoch))
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	j.buildDigest, j.baseDigest, j.annotations = buildDigest, baseDigest, meta
	j.mu.Unlock()
	return assembly.Result(ref, arm64Platform(), config, meta)
}

// resolveBase returns the digest and arm64 config of a base image, as the
// daemon sees it through its registry hosts and the session's credentials.
// A build resolves each reference once, in the first session that needs
// it: every release built from the same tag gets the same digest.
func (j *releaseJob) resolveBase(ctx context.Context, c gateway.Client, role, ref string) (string, []byte, error) {
	platform := arm64Platform()
	opt := sourceresolver.Opt{
		LogName:  fmt.Sprintf("resolve %s base %s", role, ref),
		ImageOpt: &sourceresolver.ResolveImageOpt{Platform: &platform, ResolveMode: j.resolveMode().String()},
	}
	dgst, config, err := j.resolved.Get(ctx, resolvecache.Key(ref, opt), func() (string, []byte, error) {
		defer j.timings.Record(progress.PhaseResolve, time.Now())
		_, dgst, config, err := c.ResolveImageConfig(ctx, ref, opt)
		if err != nil {
			return "", nil, fmt.Errorf("resolve %s base %s: %w", role, ref, err)
		}
		return dgst.String(), config, nil
	})
	if err == nil {
		// The Dockerfile converter looks the base up by the pinned reference.
		j.resolved.Put(resolvecache.Key(pin(ref, dgst), opt), dgst, config)
	}
	return dgst, config, err
}

// solveRouters returns the router stage for every SM target: converted in
// jetbake when it can (see convertRouters), else through the Dockerfile
// frontend, all targets in parallel.
func (j *releaseJob) solveRouters(ctx context.Context, c gateway.Client, buildBase string) ([]llb.State, error) {
	if err := j.resolveGitContext(ctx, c); err != nil {
		return nil, err
	}
	if states, ok, err := j.convertRouters(ctx, c, buildBase); ok || err != nil {
		return states, err
	}
	inputs, err := dockerconvert.JetbakeContext(ctx, epochTime(j.opts.epoch), arm64Platform())
	if err != nil {
		return nil, err
	}
	base, err := j.crossRecipeBase(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := base.AddInput(ctx, emulation.BuildPlatform(c.BuildOpts()), inputs); err != nil {
		return nil, err
	}
	states := make([]llb.State, len(j.release.Targets))
	eg, ctx := errgroup.WithContext(ctx)
	for i, t := range j.release.Targets {
		eg.Go(func() error {
			start := time.Now()
			opts := j.routerOpts(t, buildBase)
			if err := base.AddTo(opts, nil); err != nil {
				return err
			}
			res, err := c.Solve(ctx, gateway.SolveRequest{Frontend: "dockerfile.v0", FrontendOpt: opts,
				FrontendInputs: inputs})
			j.timings.Record(progress.PhaseFrontend, start)
			if err != nil {
				return fmt.Errorf("compile %s for %s: %w", j.plan.Router.Name, t.Arch, err)
			}
			states[i], err = dockerconvert.State(res)
			return err
		})
	}
	return states, eg.Wait()
}

// routerOpts are the Dockerfile frontend options that build the router stage for t.
func (j *releaseJob) routerOpts(t plan.Target, buildBase string) map[string]string {
	return j.stageOpts(j.plan.Router.Target, j.routerArgs(t, buildBase))
}

// stageOpts are the Dockerfile frontend options that build stage target
// with args.
func (j *releaseJob) stageOpts(target string, args map[string]string) map[string]string {
	opts := map[string]string{
		"target":                             target,
		"platform":                           platforms.Format(arm64Platform()),
		"filename":                           j.dockerfile,
		"context:" + dockerfiles.ContextName: "input:" + dockerfiles.ContextName,
	}
	for k, v := range args {
		opts["build-arg:"+k] = v
	}
	if j.gitContext != "" {
		opts["context"] = j.routerContext()
		opts["dockerfilekey"] = localDockerfile
	}
	if j.noCache() {
		opts["no-cache"] = "" // every stage, as buildx --no-cache sends it
	}
	if j.opts.controls.Pull {
		opts["image-resolve-mode"] = llb.ResolveModeForcePull.String()
	}
	return opts
}

// routerArgs are the build args of the router stage for t: the target's
// own (see plan.Target.BuildArgs; a plan made by hand may set only the
// release's), then jetbake's, which may not be overridden.
func (j *releaseJob) routerArgs(t plan.Target, buildBase string) map[string]string {
	args := maps.Clone(t.BuildArgs)
	if args == nil {
		args = maps.Clone(j.release.BuildArgs)
	}
	args = j.withJetbakeArgs(args, buildBase, j.runtimeBase)
	args["CUDA_COMPUTE_CAP"], args["CUDA_ARCH"] = t.ComputeCap, t.Arch
	if j.buildPath().Path == emulation.PathCross {
		// Dockerfile-jetson's toolchain-cross stage, on $BUILDPLATFORM.
		args["TOOLCHAIN"], args["CROSS_BUILD_BASE"], args["CUDA_TARGET_DIR"] = "toolchain-cross", j.crossBase, j.release.CUDATargetDir
		if j.release.CrossBuildRecipe != nil {
			// The base the recipe builds, a named context (crossbase.go).
			args["CROSS_BUILD_BASE"] = crossrecipe.ContextName
		}
	}
	return args
}

// runtimeArgs are the build args of the runtime stage: the router's and
// the release's (plan.Release.RuntimeBuildArgs), then jetbake's, with the
// runtime base pinned to the digest the image is assembled on.
func (j *releaseJob) runtimeArgs(buildBase, runtimeBase string) map[string]string {
	args := maps.Clone(j.release.RuntimeBuildArgs)
	if args == nil {
		args = maps.Clone(j.release.BuildArgs)
	}
	return j.withJetbakeArgs(args, buildBase, runtimeBase)
}

// withJetbakeArgs adds the build args jetbake passes to every stage: the
// bases, the release's CUDA, the router's version, the commit time, and
// GIT_SHA, the router source's pinned commit, unless the matrix sets it.
func (j *releaseJob) withJetbakeArgs(args map[string]string, buildBase, runtimeBase string) map[string]string {
	if args == nil {
		args = map[string]string{}
	}
	if args["GIT_SHA"] == "" && j.plan.Router.Commit != "" {
		args["GIT_SHA"] = j.plan.Router.Commit
	}
	maps.Copy(args, map[string]string{
		"BUILD_BASE":        buildBase,
		"RUNTIME_BASE":      runtimeBase,
		"CUDA_RELEASE":      j.release.CUDA,
		"ROUTER_VERSION":    j.plan.Router.Version,
		"SOURCE_DATE_EPOCH": strconv.FormatInt(j.opts.epoch, 10),
	})
	return args
}

// resolveMode is how base images are resolved: from the registry anew with --pull.
func (j *releaseJob) resolveMode() llb.ResolveMode {
	if j.opts.controls.Pull {
		return llb.ResolveModeForcePull
	}
	return llb.ResolveModeDefault
}

// runtimeState lays out the runtime image (assembly.Layers): the runtime
// image with jetbake's layer and the release's routers and image.json.
func (j *releaseJob) runtimeState(c gateway.Client, image runtimeImage, routers []llb.State, desc []byte) llb.State {
	binaries := []string{EntrypointPath, CUDAProbePath, ProbePath}
	var names []string
	for _, b := range binaries {
		names = append(names, path.Base(b))
	}
	l := assembly.Layout{Image: image.state, Base: image.base, Binaries: binaries, SMs: imageconfig.SMList(j.release), App: j.isApp(),
		Tools:       llb.Local(localEntrypoint, llb.SessionID(c.BuildOpts().SessionID), llb.SharedKeyHint(localEntrypoint), llb.IncludePatterns(names)),
		Description: desc, Epoch: epochTime(j.opts.epoch), NoCache: j.noCache(), Caps: c.BuildOpts().LLBCaps}
	for i, t := range j.release.Targets {
		if j.isApp() {
			break // an app's command is in its stage
		}
		l.Routers = append(l.Routers, assembly.Router{Stage: routers[i], Output: j.plan.Router.Output, Path: t.Path})
	}
	return assembly.Layers(l)
}

// runtimeBaseState is the runtime base image at ref.
func (j *releaseJob) runtimeBaseState(ref string) llb.State {
	return llb.Image(ref, llb.Platform(arm64Platform()), llb.WithCustomName(progress.RuntimeBasePrefix+ref), j.resolveMode())
}

// pin adds digest to ref unless ref already names one.
func pin(ref, digest string) string {
	if digest == "" || strings.Contains(ref, "@") {
		return ref
	}
	return ref + "@" + digest
}
