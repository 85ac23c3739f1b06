package imagebuild

import (
	"context"
	"io"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imagebuild/cacheconfig"
	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/selection"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

type options struct {
	releases        []string
	mirrors         refs.Mirrors
	locks           map[string]string
	gitPin          gitPin   // see WithGitPin
	gitCredentials  []string // see WithGitCredentials
	entrypointDir   string
	baseDir         string
	revision        string
	toolVersion     string
	toolCommit      string
	controls        Controls
	epoch           int64
	push            bool
	outputs         []localoutput.Output
	cache           cacheconfig.Settings // with the environment that completes the caches
	parallel        int
	retries         int
	onAttempt       func(node, release string)
	continueOnError bool
	progressMode    string
	progressOut     io.Writer
	advice          Advice
	remoteOpts      []remote.Option
	sessionAttach   []session.Attachable
	baseReader      *baseinfo.Reader
	knownBases      map[string]baseinfo.Info
	buildPath       string // see WithBuildPath
	// verdictDir and tool are WithVerdicts'.
	verdictDir string
	tool       string
	// onSmokeVerdict is WithSmokeVerdictHook's.
	onSmokeVerdict func(ctx context.Context, release string, err error)
}

// Option configures a Builder.
type Option func(*options)

// WithReleases builds only the named releases (all when empty). The image
// description of each still lists the whole family.
func WithReleases(names ...string) Option { return func(o *options) { o.releases = names } }

// BuildPathAuto is WithBuildPath's value that lets every release's path
// be chosen (emulation.ChoosePath), whatever its build_path says.
const BuildPathAuto = emulation.Auto

// WithBuildPath forces the router stage's path on amd64 nodes over the
// matrix's build_path: "cross" or "qemu", or BuildPathAuto; "" keeps the
// matrix's.
func WithBuildPath(path string) Option { return func(o *options) { o.buildPath = path } }

// WithMirrors rewrites base image registries.
func WithMirrors(m refs.Mirrors) Option { return func(o *options) { o.mirrors = m } }

// WithLocks pins base images: each matrix reference maps to the digest to build from.
func WithLocks(locks map[string]string) Option { return func(o *options) { o.locks = locks } }

// WithEntrypointDir names the folder that holds the linux/arm64
// jetbake-entrypoint, jetbake-cudaprobe and jetbake-probe binaries copied into every image.
func WithEntrypointDir(dir string) Option { return func(o *options) { o.entrypointDir = dir } }

// WithBaseDir resolves the plan's relative router context and Dockerfile paths.
func WithBaseDir(dir string) Option { return func(o *options) { o.baseDir = dir } }

// WithSource sets the revision recorded in annotations and the timestamp
// (SOURCE_DATE_EPOCH) every layer and config carries, for reproducible digests.
func WithSource(revision string, epoch int64) Option {
	return func(o *options) { o.revision, o.epoch = revision, epoch }
}

// WithTool records the jetbake that builds: its version goes into every
// image as the io.jetbake.version label and annotation, and entrypoint
// binaries built from another commit than toolCommit are refused. Both
// default to "" (no label, no check).
func WithTool(toolVersion, toolCommit string) Option {
	return func(o *options) { o.toolVersion, o.toolCommit = toolVersion, toolCommit }
}

// Controls are the build's cache, pull and attestation switches, as buildx
// names them.
type Controls struct {
	// NoCache builds every step anew (--no-cache).
	NoCache bool
	// Pull resolves every base image from its registry anew (--pull).
	Pull bool
	// Provenance is the provenance attestation's attributes, e.g.
	// "mode=min" or "mode=max"; "" attaches none (--provenance=false).
	Provenance string
	// SBOM is the SBOM attestation's attributes, e.g.
	// "generator=docker/buildkit-syft-scanner:stable-1"; "" attaches none.
	SBOM string
}

// WithControls sets the build's cache, pull and attestation switches
// (default: cache used, bases resolved once, no provenance).
func WithControls(c Controls) Option { return func(o *options) { o.controls = c } }

// WithVerdicts remembers each release's passing smoke run and build-time
// audit in dir (verdicts.DefaultDir() is the user's cache folder's), keyed
// by what they depend on, with tool as jetbake's identity: a later build
// of the same routers on the same runtime image by the same jetbake runs
// neither again. "" (the default) remembers nothing. A release built with
// no-cache neither reads nor writes the store.
func WithVerdicts(dir, tool string) Option {
	return func(o *options) { o.verdictDir, o.tool = dir, tool }
}

// WithPush pushes each image by digest while building, and tags them all
// once every selected release succeeded.
func WithPush(push bool) Option { return func(o *options) { o.push = push } }

// WithOutputs writes each image locally too.
func WithOutputs(outs ...localoutput.Output) Option { return func(o *options) { o.outputs = outs } }

// WithCache imports from and exports to caches; every entry gets a scope per
// release (a registry ref's tag, a local subfolder, an S3 name, a GitHub
// Actions scope) so that releases do not evict each other, and GitHub
// Actions and S3 entries are completed from the environment as buildx
// completes them.
func WithCache(from, to []client.CacheOptionsEntry) Option {
	return func(o *options) { o.cache.From, o.cache.To = from, to }
}

// WithParallel builds at most n releases at once on each node (default DefaultParallel).
func WithParallel(n int) Option { return func(o *options) { o.parallel = n } }

// WithRetries retries a release whose node failed (unreachable, daemon gone
// mid-build) on another node, up to n times. Build errors are not retried.
func WithRetries(n int) Option { return func(o *options) { o.retries = n } }

// WithAttemptHook calls f when a release's build starts on a node, before
// its session runs: for progress of one's own and for failover tests.
func WithAttemptHook(f func(node, release string)) Option {
	return func(o *options) { o.onAttempt = f }
}

// WithSmokeVerdictHook calls f when a release's smoke run has judged what
// the routers did (err is its refusal, nil when they passed), before the
// release's build hears it: for tests that hold a smoke run's verdict until
// its release was pushed by digest, which must still leave no tag.
func WithSmokeVerdictHook(f func(ctx context.Context, release string, err error)) Option {
	return func(o *options) { o.onSmokeVerdict = f }
}

// WithContinueOnError builds every release even after one failed.
func WithContinueOnError(v bool) Option { return func(o *options) { o.continueOnError = v } }

// WithProgress shows BuildKit's progress in mode (auto, tty, plain, rawjson, quiet) on w.
func WithProgress(mode string, w io.Writer) Option {
	return func(o *options) { o.progressMode, o.progressOut = mode, w }
}

// Advice is what the build's warnings and report lines advise, in the
// caller's words: the build writes them while it runs, where a caller
// cannot reword them as it can the errors Build returns. An empty field
// leaves its advice out.
type Advice struct {
	// ContinueOnError ends the error of a release that did not start
	// because an earlier one failed, in parentheses: how to build every
	// release, e.g. "use --continue-on-error to build every release".
	ContinueOnError string
	// Nodes ends the warning that a node compiles under emulation: how to
	// build on arm64 BuildKit nodes instead, e.g. "with --node NAME=ADDR".
	Nodes string
	// Offline ends the fix of a base whose registry's name did not
	// resolve: how to build from a registry that is reachable, e.g.
	// "pass --mirror REGISTRY=HOST[:PORT] naming a registry this machine can reach".
	Offline string
}

// WithAdvice words what the build's warnings and report lines advise.
func WithAdvice(a Advice) Option { return func(o *options) { o.advice = a } }

// WithRemoteOptions sets the go-containerregistry options used to put tags on.
func WithRemoteOptions(opts ...remote.Option) Option {
	return func(o *options) { o.remoteOpts = opts }
}

// WithSession attaches session providers (credentials, secrets, SSH
// agents) to every build: BuildKit asks the session for them.
func WithSession(attachables ...session.Attachable) Option {
	return func(o *options) { o.sessionAttach = attachables }
}

// WithBaseReader reads what each base holds with r (default: a reader with
// the WithRemoteOptions credentials and no cache).
func WithBaseReader(r *baseinfo.Reader) Option { return func(o *options) { o.baseReader = r } }

// WithKnownBases gives what bases were read to hold before, by matrix
// reference, such as a lock file's contents: a base pinned (WithLocks) to
// the digest an entry was read at is not read again.
func WithKnownBases(known map[string]baseinfo.Info) Option {
	return func(o *options) { o.knownBases = known }
}

// CheckOptions checks the options of a build of p that need no daemon:
// the releases (selection.Releases), WithPush without image.repository
// (ErrNoRepository), an output type given twice (*localoutput.Error) and a
// progress display that cannot start (*progress.Error). Build checks them
// again; a command calls CheckOptions to refuse them before it connects
// to a daemon or starts one.
func CheckOptions(p *plan.Plan, opts ...Option) error {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if _, err := selection.Releases(p, o.releases); err != nil {
		return err
	}
	if err := o.checkPushAndOutputs(p); err != nil {
		return err
	}
	return progress.Check(o.progressMode, o.progressOut)
}

// checkPushAndOutputs refuses WithPush without a repository to push to,
// and two outputs of one type.
func (o options) checkPushAndOutputs(p *plan.Plan) error {
	if o.push && p.Repository == "" {
		return ErrNoRepository
	}
	return localoutput.CheckTypes(o.outputs)
}
