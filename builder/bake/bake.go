// Package bake runs one whole build of a matrix's images, the work of
// `jetbake build`: it checks the selected releases, pins the bases and the
// router's git context from the lock file, finds the entrypoint binaries,
// connects to BuildKit and builds with package imagebuild, Docker's
// registry credentials attached. A command parses its flags into Options
// and prints the report; this package names no flag.
package bake

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/docker/cli/cli/config"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/auth/authprovider"
	"github.com/moby/buildkit/session/secrets"
	"github.com/moby/buildkit/session/secrets/secretsprovider"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/entrypoints"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/cacheconfig"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/builder/version"
)

// Options are what one build is given. Each input is checked once, where
// it is used: the releases, Push, Outputs and Progress by
// imagebuild.CheckOptions before anything is read or dialed, the rest by
// the package that takes it.
type Options struct {
	// MatrixPath is the matrix file; the lock file is found beside it.
	MatrixPath string
	// Source is the matrix's folder, the revision and the timestamp the
	// images record (see ReadSource).
	Source Source
	// Releases are the releases to build, in that order; none builds all.
	Releases []string
	// Push pushes each image by digest while building and tags them all
	// once every selected release succeeded.
	Push bool
	// Outputs are local copies of every image.
	Outputs []localoutput.Output
	// Mirrors rewrite base registries (and the SBOM scanner's).
	Mirrors refs.Mirrors
	// CacheFrom and CacheTo are the caches imported and exported.
	CacheFrom, CacheTo []plan.Cache
	// Controls are the cache, pull and attestation switches.
	Controls imagebuild.Controls
	// BuildPath forces the routers' path on amd64 nodes over the matrix's
	// build_path: "auto", "cross" or "qemu"; "" keeps the matrix's.
	BuildPath string
	// Parallel is how many releases each node builds at once;
	// 0 is imagebuild.DefaultParallel.
	Parallel int
	// Retries is how often a release whose node failed is tried on
	// another node.
	Retries int
	// ContinueOnError builds every release after one failed.
	ContinueOnError bool
	// Progress is BuildKit's progress mode: auto, tty, plain, rawjson or quiet.
	Progress string
	// Log gets the progress, the warnings and jetbake's own lines; nil
	// discards them.
	Log io.Writer
	// Secrets are handed to every router stage; GitCredentials are the ids
	// of those the router's git context reads (gitcontext.Context.SecretIDs).
	Secrets        secrets.SecretStore
	GitCredentials []string
	// Session are more session providers for every build, such as SSH
	// agents, after Docker's credentials and Secrets.
	Session []session.Attachable
	// LockFile is the lock file; "" is the lock package's default beside
	// the matrix, when it exists. CheckLock compares its pins with the
	// registries and the git remote first.
	LockFile  string
	CheckLock bool
	// EntrypointDir holds the linux/arm64 entrypoint binaries; "" takes
	// this jetbake's own (package entrypoints).
	EntrypointDir string
	// RememberVerdicts remembers each release's passing smoke run and
	// audit in the user's cache folder and runs neither again on the same
	// inputs (imagebuild.WithVerdicts); Controls.NoCache skips the store.
	// jetbake build sets it unless --remember-verdicts=false: the key's
	// digests come from a step BuildKit caches with the routers
	// (docs/speed.md#remembered-verdicts).
	RememberVerdicts bool
	// Daemons are the BuildKit daemons to build on.
	Daemons Daemons
	// Advice words what the build's warnings and report lines advise.
	Advice imagebuild.Advice
}

// Build builds p's selected releases as o says and returns the report,
// or nil when the build did not start. The error is nil only when every
// release succeeded (see imagebuild.Builder.Build); before the build it is
// one of the typed errors of imagebuild, plan, lock, entrypoints or daemon
// where an option is wrong or the setup lacks something, which a command
// words with its own flags.
func Build(ctx context.Context, p *plan.Plan, o Options) (*imagebuild.Report, error) {
	checked := []imagebuild.Option{imagebuild.WithReleases(o.Releases...), imagebuild.WithPush(o.Push),
		imagebuild.WithOutputs(o.Outputs...), imagebuild.WithProgress(o.Progress, o.Log)}
	if err := imagebuild.CheckOptions(p, checked...); err != nil {
		return nil, err
	}
	logf := o.logf()
	if o.Source.Dirty {
		logf("warning: %s has uncommitted changes; the images' revision annotation (%.12s) does not describe them", o.Source.Dir, o.Source.Revision)
	}
	pins, err := o.pins(ctx, p, logf)
	if err != nil {
		return nil, err
	}
	epDir, err := entrypointDir(ctx, o.EntrypointDir, logf)
	if err != nil {
		return nil, err
	}
	tool := version.Get()
	opts := append(append(checked, o.builderOptions()...), pins...)
	opts = append(opts, imagebuild.WithEntrypointDir(epDir), imagebuild.WithTool(tool.Version, tool.Commit))
	if o.RememberVerdicts {
		opts = append(opts, imagebuild.WithVerdicts(imagebuild.DefaultVerdictDir(), toolIdentity(tool)))
	}
	nodes, closeNodes, err := Connect(ctx, o.Daemons, logf)
	if err != nil {
		return nil, err
	}
	defer closeNodes()
	return imagebuild.NewCluster(nodes, opts...).Build(ctx, p)
}

// builderOptions are the imagebuild options that o gives as they are,
// besides the ones Build checks first.
func (o Options) builderOptions() []imagebuild.Option {
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	session := []session.Attachable{DockerAuth()}
	if o.Secrets != nil {
		session = append(session, secretsprovider.NewSecretProvider(o.Secrets))
	}
	opts := []imagebuild.Option{
		imagebuild.WithMirrors(o.Mirrors),
		imagebuild.WithBaseDir(o.Source.Dir),
		imagebuild.WithSource(o.Source.Revision, o.Source.Epoch),
		imagebuild.WithCache(cacheconfig.Entries(o.CacheFrom), cacheconfig.Entries(o.CacheTo)),
		imagebuild.WithRetries(o.Retries),
		imagebuild.WithContinueOnError(o.ContinueOnError),
		imagebuild.WithControls(o.Controls),
		imagebuild.WithRemoteOptions(auth),
		imagebuild.WithBaseReader(baseinfo.New(baseinfo.WithRemoteOptions(auth), baseinfo.WithCacheDir(baseinfo.DefaultCacheDir()))),
		imagebuild.WithSession(append(session, o.Session...)...),
		imagebuild.WithAdvice(o.Advice),
		imagebuild.WithBuildPath(o.BuildPath),
	}
	if o.Parallel > 0 {
		opts = append(opts, imagebuild.WithParallel(o.Parallel))
	}
	return opts
}

// logf writes one line of jetbake's own to o.Log.
func (o Options) logf() func(format string, args ...any) {
	w := o.Log
	if w == nil {
		w = io.Discard
	}
	return func(format string, args ...any) { fmt.Fprintf(w, "jetbake: "+format+"\n", args...) }
}

// DockerAuth gives BuildKit the registry credentials of the Docker config,
// as docker buildx does.
func DockerAuth() session.Attachable {
	return authprovider.NewDockerAuthProvider(authprovider.DockerAuthProviderConfig{
		AuthConfigProvider: authprovider.LoadAuthConfig(config.LoadDefaultConfigFile(os.Stderr)),
	})
}

// entrypointDir is dir, else the folder of this jetbake's own entrypoint
// binaries (see package entrypoints).
func entrypointDir(ctx context.Context, dir string, logf func(string, ...any)) (string, error) {
	if dir != "" {
		return dir, nil
	}
	dir, _, err := entrypoints.Dir(ctx, entrypoints.WithLogf(logf))
	return dir, err
}

// toolIdentity is what tells this jetbake from another for its remembered
// verdicts: its version and commit, and for a build of a modified checkout
// (or one of no known commit) its binary's path, size and time, so that a
// jetbake rebuilt with other changes never reuses a verdict.
func toolIdentity(tool version.Info) string {
	id := tool.String()
	if !tool.Modified && tool.Commit != "" {
		return id
	}
	exe, err := os.Executable()
	if err != nil {
		return id + " unknown binary " + time.Now().String() // remembers nothing that matches
	}
	st, err := os.Stat(exe)
	if err != nil {
		return id + " unknown binary " + time.Now().String()
	}
	return fmt.Sprintf("%s binary %s %d %d", id, exe, st.Size(), st.ModTime().UnixNano())
}
