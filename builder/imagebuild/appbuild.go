package imagebuild

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	gateway "github.com/moby/buildkit/frontend/gateway/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/imagebuild/appstage"
	"github.com/jetbake/jetbake/builder/imagebuild/assembly"
	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/imagebuild/dockerconvert"
	"github.com/jetbake/jetbake/builder/imagebuild/imageconfig"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/pydist"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// buildApp is buildImage for an app's release: no per-SM compile. It
// solves the app's stage through the Dockerfile frontend on the release's
// framework container (BASE, pinned to the digest the build resolved),
// checks it (checkApp: the vendor stack, the audit of every ELF file for
// every SM target), then lays jetbake's layers over it as runtimeState
// does for a router's runtime stage: the entrypoint and the probes, and
// image.json (kind app, the command, the check). Nothing is exported
// unless the checks pass, so a refused release leaves no image and no tag.
func (j *releaseJob) buildApp(ctx context.Context, c gateway.Client) (*gateway.Result, error) {
	baseDigest, _, err := j.resolveBase(ctx, c, "app", j.runtimeBase)
	if err != nil {
		return nil, err
	}
	base := pin(j.runtimeBase, baseDigest)
	j.appBases.Start(base) // read beside the stage's build
	if err := j.resolveGitContext(ctx, c); err != nil {
		return nil, err
	}
	image, err := j.appStage(ctx, c, base)
	if err != nil {
		return nil, err
	}
	imports, err := dockerconvert.CacheImports(c)
	if err != nil {
		return nil, err
	}
	audit, err := j.checkApp(ctx, c, image, base, imports)
	if err != nil {
		return nil, err
	}
	desc, err := imageconfig.Description(j.plan, j.release, j.opts.revision)
	if err != nil {
		return nil, err
	}
	ref, err := appstage.Solve(ctx, c, j.runtimeState(c, image, nil, desc), imports)
	if err != nil {
		return nil, fmt.Errorf("assemble the app's image: %w", err)
	}
	meta := imageconfig.Metadata(j.release, j.opts.revision, epochTime(j.opts.epoch), j.release.Base, baseDigest)
	if j.opts.toolVersion != "" {
		meta[KeyToolVersion] = j.opts.toolVersion
	}
	meta[matrix.KeyAudit] = audit
	config, err := j.appConfig(image.config, meta)
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	j.baseDigest, j.annotations = baseDigest, meta
	j.mu.Unlock()
	return assembly.Result(ref, arm64Platform(), config, meta)
}

// appStage solves the app's stage (app.target, "" the last) through the
// Dockerfile frontend with the release's build args, BASE the pinned base.
func (j *releaseJob) appStage(ctx context.Context, c gateway.Client, base string) (runtimeImage, error) {
	args := maps.Clone(j.release.AppBuildArgs)
	if args == nil {
		args = map[string]string{}
	}
	args[matrix.BaseBuildArg] = base
	args["SOURCE_DATE_EPOCH"] = strconv.FormatInt(j.opts.epoch, 10)
	start := time.Now()
	st, cfg, err := j.frontendStage(ctx, c, j.plan.App.Target, args)
	j.timings.Record(progress.PhaseFrontend, start)
	if err != nil {
		return runtimeImage{}, fmt.Errorf("build %s on %s: %w", j.stageName(), j.release.Base, err)
	}
	baseState := j.runtimeBaseState(base)
	return runtimeImage{state: st, base: &baseState, config: cfg,
		name: fmt.Sprintf("%s on %s", j.stageName(), j.release.Base)}, nil
}

// stageName names the app's stage in messages.
func (j *releaseJob) stageName() string {
	if j.plan.App.Target == "" {
		return "the last stage of " + j.dockerfile
	}
	return fmt.Sprintf("stage %s of %s", j.plan.App.Target, j.dockerfile)
}

// appConfig derives the image's config from the app stage's: the
// entrypoint, the app's default arguments, environment and ports, NVIDIA's
// variables and the labels (see imageconfig.Router), the rest (the stage's ENV,
// WORKDIR, USER) kept.
func (j *releaseJob) appConfig(stageConfig []byte, labels map[string]string) ([]byte, error) {
	var img ocispecs.Image
	if err := json.Unmarshal(stageConfig, &img); err != nil {
		return nil, fmt.Errorf("%s: config is not valid JSON: %w", j.stageName(), err)
	}
	app := j.plan.App
	run := imageconfig.Program{Entrypoint: EntrypointPath, Cmd: app.Cmd, Env: app.Env, Ports: app.Ports}
	return imageconfig.With(img, run, j.release, labels, epochTime(j.opts.epoch), fmt.Sprintf("jetbake: %s for %s", imagespec.Path, imageconfig.SMList(j.release)))
}

// isApp reports whether the job builds an app's release.
func (j *releaseJob) isApp() bool { return j.plan != nil && j.plan.App != nil }

// checkApp checks the app's image before it is exported, so before any
// tag: the vendor stack (the base's framework packages kept, package
// pydist's sentences otherwise), the audit of every ELF file of the
// image for every SM target (an SBSA wheel's library without code for
// Orin is refused by name) and the app's smoke run (appSmoke). It
// records the audit and returns the value of its annotation,
// "8.7=runs,11.0=runs".
func (j *releaseJob) checkApp(ctx context.Context, c gateway.Client, image runtimeImage, base string, imports []gateway.CacheOptionsEntry) (string, error) {
	// The smoke run needs none of the reads: it runs beside them.
	// Every return waits for it, canceled unless it was waited for.
	smokeCtx, cancel := context.WithCancel(ctx)
	var smokeErr error
	smokeDone := make(chan struct{})
	go func() {
		defer close(smokeDone)
		smokeErr = j.appSmoke(smokeCtx, c, image, base, imports)
	}()
	defer func() {
		cancel()
		<-smokeDone
	}()
	read, err := j.appBases.Wait(ctx, base)
	if err != nil {
		return "", err
	}
	j.mu.Lock()
	j.baseInfo[0] = read.Info // the report's base: its flavour and CUDA
	j.mu.Unlock()
	inv, code, err := appstage.Read(ctx, c, image.state, image.base, imports, read)
	if err != nil {
		return "", err
	}
	stack := pydist.CompareApp(read.Inv, inv, j.plan.App.Command[0])
	stackErr := cmp.Or(appstage.NoTorch(j.plan.App.Framework, j.release.Base, j.release.Name, read.Inv), stack.Err())
	for _, w := range stack.Warnings() {
		j.addFinding(dockercheck.Finding{Release: j.release.Name, Severity: dockercheck.SeverityWarning, Rule: "FrameworkPin",
			Message: w.Sentence(), File: pydist.ConstraintPath})
	}
	audits, auditErr := j.auditRelease().Judge(j.facts(), nil, code)
	<-smokeDone
	err = cmp.Or(stackErr, auditErr, smokeErr)
	j.mu.Lock()
	j.audit, j.appErr = audits, err
	j.mu.Unlock()
	if err != nil {
		return "", err
	}
	parts := make([]string, len(audits))
	for i, a := range audits {
		parts[i] = a.SM + "=" + a.Verdict
	}
	return strings.Join(parts, ","), nil
}
