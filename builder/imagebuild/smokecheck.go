package imagebuild

import (
	"context"
	"slices"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/crossrecipe"
	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// smokeRun is a release's build-time smoke run (router.smoke, e.g.
// --version): every router binary run on the runtime image, under QEMU on
// the building machine, with what the image would give it on a Jetson.
type smokeRun struct {
	image   runtimeImage
	routers []llb.State
	stub    llb.State
	imports []gateway.CacheOptionsEntry
}

// newSmokeRun prepares the smoke run on image, nil when the router has no
// smoke command. It loads a driver stub (smokeStub).
func (j *releaseJob) newSmokeRun(ctx context.Context, c gateway.Client, image runtimeImage, routers []llb.State, buildBase string, imports []gateway.CacheOptionsEntry) (*smokeRun, error) {
	if len(j.plan.Router.Smoke) == 0 {
		return nil, nil
	}
	stub, err := j.smokeStub(ctx, c, buildBase)
	if err != nil {
		return nil, err
	}
	return &smokeRun{image: image, routers: routers, stub: stub, imports: imports}, nil
}

// smokeStub is the driver stub the smoke run loads: on the cross path the
// cross build base's, which the routers link (smoke.CrossStub: no pull of
// the arm64 build base, no QEMU step); else the build base's (smoke.Stub).
func (j *releaseJob) smokeStub(ctx context.Context, c gateway.Client, buildBase string) (llb.State, error) {
	if j.buildPath().Path != emulation.PathCross {
		return smoke.Stub(buildBase, j.resolveMode()), nil
	}
	recipe, err := j.crossRecipeBase(ctx, c)
	if err != nil {
		return llb.State{}, err
	}
	base := crossrecipe.State(recipe, c, j.resolved, j.crossBase, emulation.BuildPlatform(c.BuildOpts()), j.resolveMode())
	return smoke.CrossStub(base, j.release.CUDATargetDir), nil
}

// stubOrigin says where smokeStub takes the stub from, for the judge.
func (j *releaseJob) stubOrigin() smoke.StubOrigin {
	if j.buildPath().Path == emulation.PathCross {
		return smoke.CrossBaseStub(j.crossBaseName(), j.release.CUDATargetDir)
	}
	return smoke.BuildBaseStub(j.release.BuildBase)
}

// on is what the run runs on, as package smoke takes it.
func (run *smokeRun) on() smoke.On {
	return smoke.On{Image: run.image.state, Name: run.image.name, Config: run.image.config, Routers: run.routers, Stub: run.stub}
}

// handSmoke returns the function the release's build hands its smoke run
// to, or nil (solve it inline) without d.
func (j *releaseJob) handSmoke(d *smoke.Deferred) func(*smokeRun) {
	if d == nil {
		return nil
	}
	return func(run *smokeRun) {
		d.Hand(func(ctx context.Context, c gateway.Client) error { return j.smokeCheck(ctx, c, run) })
	}
}

// smokeSpec is the release's smoke run as package smoke takes it.
func (j *releaseJob) smokeSpec() smoke.Spec {
	s := smoke.Spec{Router: j.plan.Router.Name, Args: j.plan.Router.Smoke, Env: j.plan.Router.Env, Output: j.plan.Router.Output,
		OwnFiles: []string{EntrypointPath, CUDAProbePath, ProbePath, imagespec.Path}, Stub: j.stubOrigin(), CUDA: j.release.CUDA}
	for _, t := range j.release.Targets {
		s.Paths = append(s.Paths, t.Path)
	}
	return s
}

// smokeCheck reads each router's DT_NEEDED and loader, then solves the
// smoke run and judges what each binary did. The runtime image and the
// driver stub, which the run needs and which need no router, are built
// while the routers compile, not after them.
func (j *releaseJob) smokeCheck(ctx context.Context, c gateway.Client, run *smokeRun) error {
	var bins []smoke.Binary
	err := j.beside(ctx, c, run.imports, run.routers, func(ctx context.Context) (err error) {
		// Evaluate: the routers' compile errors surface here, as themselves.
		bins, err = j.readBinaries(ctx, c, run)
		return err
	}, run.image.state, run.stub)
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.binaries = bins
	j.mu.Unlock()
	spec := j.smokeSpec()
	def, err := spec.Definition(ctx, run.on(), bins)
	if err != nil {
		return err
	}
	read, err := smoke.Solve(ctx, c, def, run.imports)
	if err != nil {
		return err
	}
	j.mu.Lock()
	for i := range j.binaries {
		if len(j.binaries[i].Needed) > 0 {
			j.binaries[i].Resolved = smoke.ResolvedLibraries(j.binaries[i].Needed, read(j.binaries[i].Binary+".ldd"))
		}
	}
	bins = slices.Clone(j.binaries)
	j.mu.Unlock()
	err = spec.Judge(run.image.name, read(smoke.ResultFile), bins, read)
	if j.opts.onSmokeVerdict != nil {
		j.opts.onSmokeVerdict(ctx, j.release.Name, err)
	}
	if err != nil {
		return err
	}
	return j.auditLibraries(ctx, c, run, bins)
}
