package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// Folders of the build-time smoke run: what each router printed, and the
// build base's CUDA driver stub, which stands in for the Jetson's driver.
const (
	smokeDir    = "/jetbake-smoke"
	smokeDriver = "/jetbake-smoke-driver"
)

// driverStubPaths are where NVIDIA's CUDA devel images keep the driver's
// link-time stub, stubs/libcuda.so (soname libcuda.so.1), first match wins.
var driverStubPaths = []string{
	"/usr/local/cuda/lib64/stubs/libcuda.so",
	"/usr/local/cuda/targets/*/lib/stubs/libcuda.so",
	"/usr/local/cuda-*/targets/*/lib/stubs/libcuda.so",
}

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
// smoke command. Every linking mode of TEI's router needs the driver,
// libcuda.so.1, which NVIDIA's runtime mounts from the Jetson and no
// runtime image has; the run loads the build base's driver stub as
// libcuda.so.1 instead, for the run only, never in the image.
func (j *releaseJob) newSmokeRun(image runtimeImage, routers []llb.State, buildBase string, imports []gateway.CacheOptionsEntry) *smokeRun {
	if len(j.plan.Router.Smoke) == 0 {
		return nil
	}
	var find strings.Builder
	find.WriteString("for f in " + strings.Join(driverStubPaths, " ") + "; do ")
	find.WriteString(`if [ -f "$f" ]; then cp "$f" /out/libcuda.so.1 && echo "$f" >/out/from; break; fi; done; exit 0`)
	stub := llb.Image(buildBase, llb.Platform(arm64Platform()), j.resolveMode()).
		Run(llb.Args([]string{"/bin/sh", "-c", find.String()}),
			llb.WithCustomName(progress.SmokePrefix+"the build base's CUDA driver stub, as libcuda.so.1 for the smoke run only")).
		AddMount("/out", llb.Scratch())
	return &smokeRun{image: image, routers: routers, stub: stub, imports: imports}
}

// smokeDefinition runs every binary with the smoke arguments on the runtime
// image, each mounted read-only at its path in the image from the router
// build's output (the same bytes, path, libraries and environment as in the
// assembled image, without waiting for the image's layers to be staged),
// and checks that the image has a CA bundle. Before the run, the dynamic
// loader of the binary (its PT_INTERP) lists what it finds of the binary's
// libraries, as ldd has it do (LD_TRACE_LOADED_OBJECTS: every library, where
// `ld.so --list` stops at the first one missing). The binaries run directly, not through the entrypoint, which
// needs a Jetson to choose one.
func (j *releaseJob) smokeDefinition(ctx context.Context, run *smokeRun, bins []Binary) (*llb.Definition, error) {
	var config ocispecs.Image
	if err := json.Unmarshal(run.image.config, &config); err != nil {
		return nil, fmt.Errorf("%s: config is not valid JSON: %w", run.image.name, err)
	}
	opts := []llb.RunOption{
		llb.Args(append([]string{"/bin/sh", "-c", j.smokeScript(bins), "jetbake-smoke"}, j.plan.Router.Smoke...)),
		llb.WithCustomNamef("%s%s %s on the runtime image", progress.SmokePrefix, j.plan.Router.Name, strings.Join(j.plan.Router.Smoke, " ")),
	}
	for _, kv := range config.Config.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			opts = append(opts, llb.AddEnv(k, v))
		}
	}
	// In a fixed order: the run's definition, and so its cache key, must
	// be the same on every build.
	for _, k := range slices.Sorted(maps.Keys(j.plan.Router.Env)) {
		opts = append(opts, llb.AddEnv(k, j.plan.Router.Env[k]))
	}
	for i, t := range j.release.Targets {
		// A mount follows a link at the source path, as the copy into the
		// image does (see runtimeState).
		opts = append(opts, llb.AddMount(t.Path, run.routers[i], llb.SourcePath(j.plan.Router.Output), llb.Readonly))
	}
	opts = append(opts, llb.AddMount(smokeDriver, run.stub, llb.Readonly))
	out := run.image.state.Run(opts...).AddMount(smokeDir, llb.Scratch())
	def, err := out.Marshal(ctx, llb.Platform(arm64Platform()))
	if err != nil {
		return nil, fmt.Errorf("marshal the smoke run: %w", err)
	}
	return def, nil
}

// smokeScript writes one line per finding to smokeDir/result: "stub PATH"
// when the build base had a driver stub; per binary "ldd NAME CODE" (its
// loader's trace, output in NAME.ldd) or "nointerp NAME" when the image
// lacks the loader, then "rc NAME CODE" (output in NAME.log); "ca" when the
// image has a CA bundle; and "link DIR" for each folder jetbake's layers
// create that is a symbolic link in the image (the layers would put a real
// folder over it, hiding what it points to).
func (j *releaseJob) smokeScript(bins []Binary) string {
	var script strings.Builder
	result := smokeDir + "/" + smokeResultFile
	fmt.Fprintf(&script, "[ -s %s/libcuda.so.1 ] && echo \"stub $(cat %s/from)\" >>%s\n", smokeDriver, smokeDriver, result)
	fmt.Fprintf(&script, "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n", smokeDriver)
	for i, t := range j.release.Targets {
		name := path.Base(t.Path)
		if i < len(bins) && bins[i].Interpreter != "" {
			interp := shellQuote(bins[i].Interpreter)
			fmt.Fprintf(&script, "if [ -x %s ]; then LD_TRACE_LOADED_OBJECTS=1 %s %s >%s/%s.ldd 2>&1; echo \"ldd %s $?\" >>%s; else echo \"nointerp %s\" >>%s; fi\n",
				interp, interp, shellQuote(t.Path), smokeDir, name, name, result, name, result)
		}
		fmt.Fprintf(&script, "%s \"$@\" >%s/%s.log 2>&1; echo \"rc %s $?\" >>%s\n",
			shellQuote(t.Path), smokeDir, name, name, result)
	}
	fmt.Fprintf(&script, "[ -s %s ] && echo ca >>%s\n", CABundlePath, result)
	for _, dir := range j.layerDirs() {
		fmt.Fprintf(&script, "[ -L %s ] && echo %s >>%s\n", shellQuote(dir), shellQuote("link "+dir), result)
	}
	script.WriteString("exit 0\n")
	return script.String()
}

// layerDirs are the folders jetbake's layers create, with their parents.
func (j *releaseJob) layerDirs() []string {
	seen := map[string]bool{}
	var dirs []string
	paths := []string{EntrypointPath, CUDAProbePath, ProbePath, imagespec.Path}
	for _, t := range j.release.Targets {
		paths = append(paths, t.Path)
	}
	for _, p := range paths {
		for dir := path.Dir(p); dir != "/" && dir != "." && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// smokeResultFile is the smoke run's findings, one per line.
const smokeResultFile = "result"

// smokeCheck reads each router's DT_NEEDED and loader, then solves the
// smoke run and judges what each binary did. The runtime image and the
// driver stub, which the run needs and which need no router, are built
// while the routers compile, not after them.
func (j *releaseJob) smokeCheck(ctx context.Context, c gateway.Client, run *smokeRun) error {
	var bins []Binary
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
	def, err := j.smokeDefinition(ctx, run, bins)
	if err != nil {
		return err
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), Evaluate: true, CacheImports: run.imports})
	if err != nil {
		return err
	}
	ref, err := res.SingleRef()
	if err != nil {
		return err
	}
	read := func(name string) string {
		data, err := ref.ReadFile(ctx, gateway.ReadRequest{Filename: name})
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(data))
	}
	j.mu.Lock()
	for i := range j.binaries {
		if len(j.binaries[i].Needed) > 0 {
			j.binaries[i].Resolved = resolvedLibraries(j.binaries[i].Needed, read(j.binaries[i].Binary+".ldd"))
		}
	}
	bins = slices.Clone(j.binaries)
	j.mu.Unlock()
	if err := j.judgeSmoke(run.image.name, read(smokeResultFile), read); err != nil {
		return err
	}
	return j.auditLibraries(ctx, c, run, bins)
}
