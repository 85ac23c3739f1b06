package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	digest "github.com/opencontainers/go-digest"

	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/builder/imagebuild/verdicts"
	"github.com/jetbake/jetbake/builder/matrix"
)

// ClearVerdicts forgets every verdict remembered in dir (see WithVerdicts;
// verdicts.DefaultDir() is jetbake build's): the next build runs every
// release's smoke run and audit. The bench's cold rounds call it.
func ClearVerdicts(dir string) error { return verdicts.Clear(dir) }

// DefaultVerdictDir is the folder jetbake build remembers verdicts in:
// <user cache dir>/jetbake/verdicts.
func DefaultVerdictDir() string { return verdicts.DefaultDir() }

// RememberedVerdict says that a release's smoke run and audit were not run:
// their passing verdict was remembered from an earlier build.
type RememberedVerdict struct {
	// Key is the verdict's key (verdicts.Inputs.Key), At when it was found.
	Key string    `json:"key"`
	At  time.Time `json:"at"`
}

// rememberedData is what a passing release keeps of its smoke run and
// audit: what a build that runs neither puts in the image and the report.
type rememberedData struct {
	Annotation string             `json:"annotation"`
	Binaries   []smoke.Binary     `json:"binaries,omitempty"`
	Audit      []buildaudit.Audit `json:"audit"`
}

// verdictStore is the store this release reads and writes: none when the
// build remembers nothing or the release builds with no-cache.
func (j *releaseJob) verdictStore() verdicts.Store {
	if j.opts.verdictDir == "" || j.noCache() {
		return verdicts.Store{}
	}
	return verdicts.Store{Dir: j.opts.verdictDir}
}

// verdictInputs are what this release's smoke run and audit depend on:
// the routers' and the runtime stage's files digested in the daemon
// (verdicts.Digests), the runtime stage's steps, the bases pinned by
// digest, the runtime config, the smoke spec, the targets and jetbake.
func (j *releaseJob) verdictInputs(ctx context.Context, c gateway.Client, routers []llb.State, image runtimeImage, runtimeBase, buildBase string, imports []gateway.CacheOptionsEntry) (verdicts.Inputs, error) {
	in := verdicts.Inputs{Tool: j.opts.tool, CUDA: j.release.CUDA, BuildBase: buildBase, Runtime: runtimeBase,
		RuntimeConfig: digest.FromBytes(image.config).String()}
	read, err := verdicts.Solve(ctx, c, verdicts.Digests(routers, j.plan.Router.Output, image.base, image.state), arm64Platform(), imports)
	if err != nil {
		return in, err
	}
	in.Targets = make([]verdicts.Target, len(j.release.Targets))
	for i, t := range j.release.Targets {
		d, err := read(verdicts.RouterFile(i), fmt.Sprintf("%s for %s", j.plan.Router.Output, t.Arch))
		if err != nil {
			return in, err
		}
		in.Targets[i] = verdicts.Target{SM: t.SM, Path: t.Path, Router: d}
	}
	if image.base != nil {
		if in.RuntimeFiles, err = read(verdicts.RuntimeFile, image.name); err != nil {
			return in, err
		}
		if in.RuntimeStage, err = verdicts.Runtime(ctx, image.state, arm64Platform()); err != nil {
			return in, err
		}
	}
	if len(j.plan.Router.Smoke) > 0 {
		spec, err := json.Marshal(j.smokeSpec())
		if err != nil {
			return in, err
		}
		in.Smoke = spec
	}
	return in, nil
}

// recallVerdict looks the release's verdict up: the audit annotation and
// true when its smoke run and audit passed before on the same inputs (the
// report then gets what they found then). It remembers the key, for
// rememberVerdict. A store that cannot be trusted, or inputs the daemon
// could not digest, are warned about: the smoke run and the audit run.
func (j *releaseJob) recallVerdict(ctx context.Context, c gateway.Client, routers []llb.State, image runtimeImage, runtimeBase, buildBase string, imports []gateway.CacheOptionsEntry) (string, bool, error) {
	store := j.verdictStore()
	if store.Dir == "" {
		return "", false, nil
	}
	start := time.Now()
	in, err := j.verdictInputs(ctx, c, routers, image, runtimeBase, buildBase, imports)
	if err != nil {
		if ctx.Err() != nil {
			return "", false, err
		}
		j.warnf("jetbake: warning: [%s] the smoke run's and the audit's verdict is neither looked up nor remembered: %v", j.release.Name, err)
		return "", false, nil
	}
	annotation, ok := j.recall(store, in.Key(), start)
	return annotation, ok, nil
}

// recall is recallVerdict once the key is known.
func (j *releaseJob) recall(store verdicts.Store, key string, start time.Time) (string, bool) {
	j.mu.Lock()
	j.verdictKey = key
	j.mu.Unlock()
	v, warn := store.Load(key)
	var data rememberedData
	if warn == nil && v != nil {
		if err := json.Unmarshal(v.Data, &data); err != nil || data.Annotation == "" || len(data.Audit) != len(j.release.Targets) {
			warn = fmt.Errorf("ignoring the remembered verdict %.12s: its data is not a release's verdict of %d targets; the smoke run and the audit run again", key, len(j.release.Targets))
		}
	}
	if warn != nil {
		j.warnf("jetbake: warning: [%s] %v", j.release.Name, warn)
	}
	if warn != nil || v == nil {
		return "", false
	}
	j.mu.Lock()
	j.binaries, j.audit = data.Binaries, data.Audit
	j.remembered = &RememberedVerdict{Key: key, At: v.At}
	j.mu.Unlock()
	j.timings.RecordCached(progress.PhaseSmoke, start)
	if j.say != nil {
		j.say("[%s] smoke and audit: remembered from %s (%s)", j.release.Name, v.At.UTC().Format(time.DateTime+" UTC"), v.Short())
	}
	return data.Annotation, true
}

// rememberVerdict keeps the release's passing verdict, once it passed its
// smoke run and audit on inputs whose key recallVerdict found no verdict
// for. A failure to keep it is a warning: it costs the next build a run.
func (j *releaseJob) rememberVerdict() {
	j.mu.Lock()
	key, remembered := j.verdictKey, j.remembered != nil
	data := rememberedData{Annotation: j.annotations[matrix.KeyAudit], Binaries: j.binaries, Audit: j.audit}
	j.mu.Unlock()
	if key == "" || remembered || data.Annotation == "" {
		return
	}
	raw, err := json.Marshal(data)
	if err == nil {
		err = j.verdictStore().Save(key, raw, time.Now())
	}
	if err != nil {
		j.warnf("jetbake: warning: [%s] the smoke run's and the audit's verdict is not remembered: %v", j.release.Name, err)
	}
}

// warnf says a warning in the build's display, when it has one.
func (j *releaseJob) warnf(format string, args ...any) {
	if j.warn != nil {
		j.warn(format, args...)
	}
}
