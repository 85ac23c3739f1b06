// Package imagebuild builds the images of a plan on BuildKit: one session per
// release, the router compiled once per SM target, the runtime image
// assembled around the entrypoint. It pushes by digest while building and
// tags only when every selected release succeeded, so no tag ever points at a
// failed release or at half a set.
//
// Options are go-containerregistry's shape, one layer: the With* functions
// write a private options struct, and the Builder, its scheduler and each
// release's job read that one struct (releaseJob.opts), never a copy of
// its fields. Functional options rather than one exported struct that
// bake fills: defaults (parallel, retries, progress, the environment that
// completes caches) stay inside the package, an option is added without
// breaking a caller, and tests name only the options they need. What a
// release changes (its own no-cache) is a method of the job over the
// options, not a second field.
package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/moby/buildkit/client"

	"github.com/jetbake/jetbake/builder/imagebuild/appstage"
	"github.com/jetbake/jetbake/builder/imagebuild/buildfailure"
	"github.com/jetbake/jetbake/builder/imagebuild/cacheconfig"
	"github.com/jetbake/jetbake/builder/imagebuild/entrypointdir"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/resolvecache"
	"github.com/jetbake/jetbake/builder/imagebuild/selection"
	"github.com/jetbake/jetbake/builder/imagebuild/sharedsession"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// DefaultParallel is how many releases a node builds at once unless
// WithParallel says otherwise. A release's session spends much of its time
// waiting (on the registry, on gateway round trips, on its frontend calls),
// so a node needs many releases in flight to stay busy; buildx bake starts
// every target at once. Sixteen keeps even a 2-core daemon busy while
// bounding the sessions one jetbake process holds.
const DefaultParallel = 16

// Builder builds a plan's images on one BuildKit daemon or a cluster of them.
type Builder struct {
	nodes []Node
	opts  options
}

// New returns a Builder that solves on c.
func New(c *client.Client, opts ...Option) *Builder {
	return NewCluster([]Node{{Name: "default", Client: c}}, opts...)
}

// NewCluster returns a Builder that spreads releases over nodes: each release
// goes to the same node on every run while that node is healthy (where its
// cache is), at most parallel releases at a time per node, and a release
// whose node fails is retried on another node.
func NewCluster(nodes []Node, opts ...Option) *Builder {
	o := options{parallel: DefaultParallel, progressMode: "quiet", mirrors: refs.Mirrors{}, retries: 2, cache: cacheconfig.Settings{LookupEnv: os.LookupEnv}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.parallel < 1 {
		o.parallel = 1
	}
	return &Builder{nodes: nodes, opts: o}
}

// Build builds the selected releases of p and returns what happened to each.
// The error is nil only when every release succeeded (and was tagged, when
// pushing); the report is returned either way once building started.
func (b *Builder) Build(ctx context.Context, p *plan.Plan) (*Report, error) {
	jobs, err := b.prepare(p)
	if err != nil {
		return nil, err
	}
	if len(b.nodes) == 0 {
		return nil, errors.New("no BuildKit node to build on")
	}
	report := &Report{Revision: b.opts.revision, SourceDateEpoch: b.opts.epoch}
	report.Releases = make([]ReleaseReport, len(jobs))
	timings := progress.NewRecorder()
	resolved := resolvecache.New()
	// What each base holds is read beside the sessions' start-up.
	reads := b.readBases(ctx, jobs, timings)
	defer reads.Close()
	apps := appstage.NewBases(ctx, b.opts.remoteOpts, timings, appstage.DefaultCacheDir())
	defer apps.Close()
	for i, j := range jobs {
		report.Releases[i] = j.initialReport()
		j.timings, j.resolved, j.appBases = timings, resolved, apps
	}
	display, err := progress.New(ctx, b.opts.progressMode, b.opts.progressOut, timings)
	if err != nil {
		return nil, err
	}
	display.Warned = frontendWarnings(jobs)
	shareEmulationNotice(jobs, display.Warnf, display.Logf, b.opts.advice.Nodes)
	for _, line := range b.opts.cache.Unusable(releasesOf(jobs)) {
		display.Warnf("jetbake: warning: %s", line)
	}
	sessions, err := b.startSessions(ctx, jobs)
	if err != nil {
		display.Close()
		return nil, err
	}
	defer sessions.Close()
	// The daemons' versions are asked for beside the builds, not before.
	daemons := make(chan []Daemon, 1)
	go func() { daemons <- b.daemons(ctx) }()
	newScheduler(b, display, sessions).run(ctx, jobs, report)
	report.Daemons = <-daemons
	display.Close()
	b.finish(ctx, jobs, report, timings)
	report.Timings = timings.Result()
	return report, report.Err()
}

// startSessions starts, per node, the session every release's build there
// shares (see sharedsession.Session), unless the build writes local outputs or
// local cache folders: BuildKit's client attaches those to a session of
// each build's own. No node gets one then.
func (b *Builder) startSessions(ctx context.Context, jobs []*releaseJob) (sharedsession.Sessions, error) {
	sessions := sharedsession.Sessions{}
	if len(jobs) == 0 || len(b.opts.outputs) > 0 || b.opts.cache.Local(releasesOf(jobs)) {
		return sessions, nil
	}
	// Every release has the same local folders: one router, one entrypoint.
	j := jobs[0]
	mounts, err := j.localMounts(b.opts.entrypointDir)
	if err != nil {
		return nil, err
	}
	for _, n := range b.nodes {
		if n.Client == nil {
			continue
		}
		ss, err := sharedsession.Start(ctx, n.Client, sharedsession.Key(j.contextDir, j.dockerfileDir, b.opts.entrypointDir), mounts, b.opts.sessionAttach)
		if err != nil {
			sessions.Close()
			return nil, err
		}
		sessions[n.Name] = ss
	}
	return sessions, nil
}

// daemons asks every node for its BuildKit version; a node that does not
// answer is listed without one (the build says why it failed there).
func (b *Builder) daemons(ctx context.Context) []Daemon {
	out := make([]Daemon, len(b.nodes))
	var wg sync.WaitGroup
	for i, n := range b.nodes {
		out[i].Node = n.Name
		if n.Client == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			if info, err := n.Client.Info(ctx); err == nil {
				out[i].Version, out[i].Revision = info.BuildkitVersion.Version, info.BuildkitVersion.Revision
			}
		}()
	}
	wg.Wait()
	return out
}

// attempt runs one release's BuildKit session on node n.
// On a node with a shared session, the build uses it.
func (b *Builder) attempt(ctx context.Context, n Node, j *releaseJob, display *progress.Display, ss *sharedsession.Session) (ReleaseReport, error) {
	if ss != nil && !ss.Alive() {
		ss = nil // the shared session ended: this build brings its own
	}
	j.resetFindings()
	rr := j.initialReport()
	start := time.Now()
	if b.opts.onAttempt != nil {
		b.opts.onAttempt(n.Name, j.release.Name)
	}
	solveOpt, cleanup, err := b.solveOpt(j)
	var deferred *smoke.Deferred
	if ss != nil && err == nil {
		solveOpt.SharedSession, solveOpt.SessionPreInitialized = ss.S, true
		deferred = smoke.NewDeferred(ctx, n.Client, ss.S, func() chan *client.SolveStatus { return display.Channel(j.release.Name) })
	}
	if err == nil {
		var resp *client.SolveResponse
		resp, err = n.Client.Build(deferred.BuildContext(ctx), solveOpt, "jetbake", j.build(n.Name, j.handSmoke(deferred)), display.Channel(j.release.Name))
		if err = deferred.Wait(err); err == nil {
			rr.Digest = resp.ExporterResponse["containerimage.digest"]
		} else if baseErr := j.baseError(); baseErr != nil {
			err = baseErr
		}
	}
	rr.duration = time.Since(start)
	rr.DurationSeconds = rr.duration.Round(time.Millisecond).Seconds()
	rr.Node = n.Name
	j.fillReport(&rr)
	if err == nil {
		rr.Outputs, err = cleanup(true)
	}
	if err != nil && ss != nil && !ss.Alive() && ctx.Err() == nil {
		// The shared session ended under the build, not the build itself.
		_, _ = cleanup(false)
		display.Logf("[%s] the shared BuildKit session on %s ended; building again with a session of its own", j.release.Name, n.Name)
		return b.attempt(ctx, n, j, display, nil)
	}
	if err != nil {
		_, _ = cleanup(false)
		if described := j.describeGitError(err); described != err {
			// The git failure in one sentence, without git's raw output.
			err = described
		} else if described := b.describePullError(err); described != err {
			// A base's registry that the daemon could not reach, in one sentence.
			err = described
		} else if out := display.FailureOutput(j.release.Name); out != "" {
			// A cross link that met the build machine's files, or the CUDA
			// compiler asked for an SM it cannot target, in one sentence first.
			err = fmt.Errorf("%w; its output ended with:\n%s", err, out)
			if described := j.describeCrossLink(err, out); described != err {
				err = described
			} else {
				err = buildfailure.CompilerRefusal(j.release, err, out)
			}
		}
		rr.Outcome, rr.Error = Failed, err.Error()
		return rr, err
	}
	rr.Outcome = Succeeded
	// Passed its smoke run and audit: a later build on the same inputs
	// need not run them.
	j.rememberVerdict()
	display.Logf("[%s] built %s on %s in %s", j.release.Name, rr.Digest, n.Name, rr.duration.Round(time.Millisecond))
	return rr, nil
}

// finish moves local outputs into place, then tags every pushed release
// when all succeeded. Outputs are kept per release with continue-on-error,
// else only when every release succeeded; tags need every release.
func (b *Builder) finish(ctx context.Context, jobs []*releaseJob, report *Report, timings *progress.Recorder) {
	keep := !report.Failed() || b.opts.continueOnError
	for i := range report.Releases {
		placeOutputs(&report.Releases[i], keep)
	}
	if report.Failed() {
		for i := range report.Releases {
			if report.Releases[i].Outcome == Succeeded {
				report.Releases[i].Outcome = Untagged
			}
		}
		return
	}
	if !b.opts.push {
		return
	}
	start := time.Now()
	err := tagAll(ctx, report, jobs, b.opts.remoteOpts)
	timings.Record(progress.PhaseTag, start)
	if err != nil {
		report.TagError = err.Error()
		for i := range report.Releases {
			report.Releases[i].Outcome = Untagged
			report.Releases[i].Tags = []string{}
		}
	}
}

// prepare selects the releases and resolves their references.
func (b *Builder) prepare(p *plan.Plan) ([]*releaseJob, error) {
	if err := b.opts.checkPushAndOutputs(p); err != nil {
		return nil, err
	}
	if err := entrypointdir.Check(b.opts.entrypointDir, b.opts.toolCommit, filepath.Base(EntrypointPath), filepath.Base(CUDAProbePath), filepath.Base(ProbePath)); err != nil {
		return nil, err
	}
	jobs, err := b.selectJobs(p)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		j.multiOutput = len(jobs) > 1
		for _, out := range b.opts.outputs {
			if err := localoutput.CheckReplaceable(localoutput.Path(out, j.release.Name, j.multiOutput)); err != nil {
				return nil, err
			}
		}
	}
	return jobs, nil
}

// selectJobs selects the releases and resolves their base references.
func (b *Builder) selectJobs(p *plan.Plan) ([]*releaseJob, error) {
	selected, err := selection.Releases(p, b.opts.releases)
	if err != nil {
		return nil, err
	}
	ctxDir, gitContext, dfDir, dfName := routerSource(p.Router.Context, p.Router.Dockerfile, b.opts.baseDir)
	if p.App != nil {
		ctxDir, gitContext, dfDir, dfName = routerSource(p.App.Context, p.App.Dockerfile, b.opts.baseDir)
	}
	git := b.opts.newGitSource(gitContext)
	var jobs []*releaseJob
	for _, rel := range selected {
		j := &releaseJob{plan: p, release: rel, gitContext: gitContext, git: git, dockerfile: dfName,
			opts: &b.opts, contextDir: ctxDir, dockerfileDir: dfDir}
		if p.App != nil {
			// An app's stage starts from its framework container, the
			// image's base: the job's runtime base.
			if j.runtimeBase, err = b.opts.mirrors.Rewrite(rel.Base, b.opts.locks[rel.Base]); err != nil {
				return nil, fmt.Errorf("release %s: base: %w", rel.Name, err)
			}
			jobs = append(jobs, j)
			continue
		}
		if j.buildBase, err = b.opts.mirrors.Rewrite(rel.BuildBase, b.opts.locks[rel.BuildBase]); err != nil {
			return nil, fmt.Errorf("release %s: build_base: %w", rel.Name, err)
		}
		if j.runtimeBase, err = b.opts.mirrors.Rewrite(rel.RuntimeBase, b.opts.locks[rel.RuntimeBase]); err != nil {
			return nil, fmt.Errorf("release %s: runtime_base: %w", rel.Name, err)
		}
		if rel.CrossBuildBase != "" {
			if j.crossBase, err = b.opts.mirrors.Rewrite(rel.CrossBuildBase, b.opts.locks[rel.CrossBuildBase]); err != nil {
				return nil, fmt.Errorf("release %s: cross_build_base: %w", rel.Name, err)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// routerSource splits the router's or app's source (its context and
// Dockerfile) into a local context folder or a git context, and the
// Dockerfile's folder and name.
func routerSource(buildContext, dockerfile, baseDir string) (ctxDir, gitContext, dfDir, dfName string) {
	abs := func(p string) string {
		if filepath.IsAbs(p) || baseDir == "" {
			return p
		}
		return filepath.Join(baseDir, p)
	}
	if matrix.IsGitContext(buildContext) {
		gitContext = buildContext
	} else {
		ctxDir = abs(buildContext)
	}
	df := abs(dockerfile)
	return ctxDir, gitContext, filepath.Dir(df), filepath.Base(df)
}
