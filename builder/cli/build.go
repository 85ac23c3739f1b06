package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/docker/cli/cli/config"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/auth/authprovider"
	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/entrypoints"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/builder/version"
)

// buildFlags are the flags of `jetbake build`.
type buildFlags struct {
	releases        []string
	push            bool
	outputs         []string
	metadataFile    string
	mirrors         []string
	parallel        int
	progress        string
	continueOnError bool
	cacheFrom       []string
	cacheTo         []string
	addr            string
	tls             daemon.TLS
	keepDaemon      bool
	stateDir        string
	buildkitd       string
	entrypointDir   string
	lockFile        string
	checkLock       bool
	revision        string
	epoch           string
	nodes           []string
	buildersFile    string
	retries         int
	tags            []string
	noCache         bool
	pull            bool
	provenance      string
	timings         bool
	// secrets, ssh, sbom, list and overrides are issue 22's flags: see buildflags.go and overrides.go.
	secrets   []string
	ssh       []string
	sbom      string
	list      string
	overrides overrideFlags
	format    func() (format, error)
}

func newBuildCommand() *cobra.Command {
	var f buildFlags
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build every release image of the matrix with BuildKit",
		Long: "build compiles the router once per SM target of each release and assembles one linux/arm64 image per\n" +
			"release. With --push it pushes each image by digest while building and puts the matrix's tags on\n" +
			"only when every selected release succeeded: no tag ever points at a failed release or half a set.\n\n" +
			"It connects to --addr or BUILDKIT_HOST, or starts bin/buildkitd (next to jetbake) with its state in\n" +
			"the user cache folder, and stops it afterwards unless --keep-daemon. Base images are pinned by\n" +
			"matrix.lock.json when it exists (see 'jetbake lock').\n\n" +
			"While converting the router's Dockerfile it runs BuildKit's Dockerfile checks (see 'jetbake check')\n" +
			"and prints their warnings. Before it compiles a release it reads what CUDA the release's bases hold\n" +
			"(version.json and the Tegra or SBSA targets folder, from the image's files; the lock file's record\n" +
			"for a pinned digest) and fails the release when a base's flavour or CUDA major.minor is not the\n" +
			"release's. Images are assembled on the router's runtime stage (router.runtime_target) or on the\n" +
			"runtime base. It runs the router's smoke command with every binary on that image, the build base's\n" +
			"CUDA driver stub standing in for the Jetson's driver, after listing the libraries each binary needs\n" +
			"(DT_NEEDED) that the image lacks, and fails the release, untagged, when one fails.\n\n" +
			"A git router context is resolved once to the commit its ref names (matrix.lock.json's commit when\n" +
			"'jetbake lock' pinned it: a tag that moved since fails the build), which the metadata file records.",
		Example: "  jetbake build --push\n" +
			"  jetbake build --release jetpack6.2 --output type=oci,dest=out/ --metadata-file build.json\n" +
			"  jetbake build --mirror nvcr.io=127.0.0.1:5000 --push --continue-on-error --progress plain",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBuild(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.releases, "release", nil, "build only this release (repeatable)")
	fl.BoolVar(&f.push, "push", false, "push to the matrix's repository and tag when every release succeeded")
	fl.StringArrayVar(&f.outputs, "output", nil, "also write locally: type=oci,dest=DIR or type=docker,dest=FILE (repeatable)")
	fl.StringVar(&f.metadataFile, "metadata-file", "", "write per-release digests, tags, bases, targets, durations and outcomes as JSON")
	fl.StringArrayVar(&f.mirrors, "mirror", nil, "rewrite a base registry: REGISTRY=HOST[:PORT] (repeatable)")
	fl.IntVar(&f.parallel, "parallel", imagebuild.DefaultParallel, "releases built at once on each node")
	fl.StringVar(&f.progress, "progress", "auto", "progress output: auto, tty, plain, rawjson, quiet or none")
	fl.BoolVar(&f.continueOnError, "continue-on-error", false, "build every release even after one failed (nothing is tagged unless all succeed)")
	fl.StringArrayVar(&f.cacheFrom, "cache-from", nil, "import cache, as buildx: type=registry,ref=REF, type=local,src=DIR, type=s3,bucket=B,region=R, type=gha (url and token from the runner) or type=azblob; each release gets its own ref tag, folder, name or scope (repeatable)")
	fl.StringArrayVar(&f.cacheTo, "cache-to", nil, "export cache, as buildx: type=registry,ref=REF,mode=max, type=local,dest=DIR, type=s3,..., type=gha,mode=max, type=azblob,... or type=inline (repeatable)")
	fl.StringArrayVar(&f.secrets, "secret", nil, "hand a secret to every router stage (RUN --mount=type=secret,id=ID): id=ID,src=FILE or id=ID,env=VAR (repeatable); it reaches no image, cache, log or metadata. id=GIT_AUTH_TOKEN.<host> (or GIT_AUTH_HEADER.<host>) authenticates a git router context; JETBAKE_GIT_AUTH_TOKEN gives it from the environment")
	fl.StringArrayVar(&f.ssh, "ssh", nil, "forward an SSH agent or keys to every router stage (RUN --mount=type=ssh): default (SSH_AUTH_SOCK), default=SOCKET or ID=KEYFILE[,KEYFILE] (repeatable)")
	fl.StringVar(&f.sbom, "sbom", "false", "SBOM attestation attached to each image: true (BuildKit's scanner, docker/buildkit-syft-scanner, through --mirror), generator=IMAGE, or false")
	fl.StringVar(&f.list, "list", "", "list the releases and exit, as buildx bake --list: releases, or type=releases,format=json")
	addOverrideFlags(cmd, &f.overrides)
	f.format = addFormatFlag(cmd)
	addDaemonFlags(cmd, &f)
	fl.StringArrayVar(&f.nodes, "node", nil, "spread releases over BuildKit nodes: NAME=ADDR (repeatable); a release sticks to one node while it is healthy")
	fl.StringVar(&f.buildersFile, "builders", "", "JSON file of nodes with TLS settings: {\"nodes\": [{\"name\", \"addr\", \"tls\": {\"ca_cert\", \"cert\", \"key\"}}]}")
	fl.IntVar(&f.retries, "retries", 2, "retry a release whose node failed (unreachable, daemon gone) on another node, up to N times")
	fl.StringVar(&f.entrypointDir, "entrypoint-dir", "", "folder with the linux/arm64 jetbake-entrypoint and jetbake-cudaprobe (default: this jetbake's own: embedded, next to it, or built from its module source)")
	fl.StringVar(&f.lockFile, "lock-file", "", "base image lock file (default: matrix.lock.json next to the matrix, when it exists)")
	fl.BoolVar(&f.checkLock, "check-lock", false, "fail before building when a base tag has moved from its locked digest")
	fl.StringVar(&f.revision, "revision", "", "your source revision for org.opencontainers.image.revision (default: git HEAD of the matrix's folder); jetbake's own version goes in io.jetbake.version")
	fl.StringArrayVar(&f.tags, "tag", nil, "add a tag to each release, with the matrix's placeholders and {sha}, e.g. '{version}-jetpack{jetpack}-{sha}' (repeatable)")
	fl.BoolVar(&f.noCache, "no-cache", false, "build every step anew, without BuildKit's cache")
	fl.BoolVar(&f.pull, "pull", false, "resolve every base image from its registry anew")
	fl.BoolVar(&f.timings, "timings", false, "print where the build's time went, phase by phase, from BuildKit's step timestamps (--metadata-file always has them)")
	fl.StringVar(&f.provenance, "provenance", "mode=min", "provenance attestation attached to each image: mode=min, mode=max, or false")
	fl.StringVar(&f.epoch, "source-date-epoch", "", "timestamp of every file and config (default: SOURCE_DATE_EPOCH, else the commit time)")
	return cmd
}

func addDaemonFlags(cmd *cobra.Command, f *buildFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "", "BuildKit daemon address: unix://, tcp://, ... (default: BUILDKIT_HOST, else a local buildkitd)")
	fl.StringVar(&f.tls.CACert, "tlscacert", "", "CA certificate of a tcp:// daemon")
	fl.StringVar(&f.tls.Cert, "tlscert", "", "client certificate for a tcp:// daemon")
	fl.StringVar(&f.tls.Key, "tlskey", "", "client key for a tcp:// daemon")
	fl.StringVar(&f.tls.ServerName, "tlsservername", "", "name to check in the daemon's certificate")
	fl.BoolVar(&f.keepDaemon, "keep-daemon", false, "leave a buildkitd that jetbake started running")
	fl.StringVar(&f.stateDir, "state-dir", "", "state folder of a buildkitd that jetbake starts (default: user cache folder)")
	fl.StringVar(&f.buildkitd, "buildkitd", "", "buildkitd binary to start (default: next to jetbake, else on PATH)")
}

func runBuild(cmd *cobra.Command, f *buildFlags) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	matrixPath := MatrixPath(cmd)
	p, mirrors, err := loadPlan(cmd, f.mirrors)
	if err != nil {
		return err
	}
	// Everything the flags and the matrix can get wrong is found before a
	// daemon is started or dialed.
	if err := checkReleases(p, f.releases); err != nil {
		return err
	}
	if f.list != "" {
		return listReleases(cmd, p, f.list, f.format)
	}
	if f.metadataFile != "" {
		if err := inputfile.CheckFolder(f.metadataFile); err != nil {
			return err
		}
	}
	specs, err := f.nodeSpecs()
	if err != nil {
		return err
	}
	if err := f.applyOverrides(p, matrixPath); err != nil {
		return err
	}
	secrets, err := newSecretSet(f.secrets, p.Router.Context)
	if err != nil {
		return err
	}
	opts, err := f.builderOptions(matrixPath, mirrors, stderr, secrets)
	if err != nil {
		return err
	}
	pinsOpts := lock.PinsOptions{File: f.lockFile, MatrixPath: matrixPath, Check: f.checkLock,
		Resolve: func(ref string) (string, error) { return mirrors.Rewrite(ref, "") }}
	lf, err := lock.Pinned(ctx, p, pinsOpts, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return err
	}
	var locks map[string]string
	if lf != nil {
		locks = lf.Bases
		opts = append(opts, imagebuild.WithKnownBases(lf.Known()))
	}
	gitOpts, err := gitPinOptions(ctx, p, pinsOpts, secrets, stderr)
	if err != nil {
		return err
	}
	opts = append(opts, gitOpts...)
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "jetbake: "+format+"\n", args...) }
	epDir, err := entrypointDir(ctx, f.entrypointDir, logf)
	if err != nil {
		return err
	}
	tool := version.Get()
	opts = append(opts, imagebuild.WithLocks(locks), imagebuild.WithRetries(f.retries),
		imagebuild.WithEntrypointDir(epDir), imagebuild.WithTool(tool.Version, tool.Commit))
	nodes, closeNodes, err := f.connectNodes(ctx, specs, logf)
	if err != nil {
		return err
	}
	defer closeNodes()
	report, buildErr := imagebuild.NewCluster(nodes, opts...).Build(ctx, p)
	if report == nil {
		return flagError(buildErr)
	}
	// BuildKit's Dockerfile checks ran while the routers were converted, as
	// in a docker build: their warnings come with the report.
	for _, rr := range report.Releases {
		for _, finding := range rr.Findings {
			fmt.Fprintln(stderr, "jetbake: check:", finding)
		}
	}
	printSummary(cmd, report)
	printRouterSource(stderr, report)
	if f.timings && report.Timings != nil {
		_ = report.Timings.WriteTable(stderr)
	}
	if f.metadataFile != "" {
		if err := report.WriteFile(f.metadataFile); err != nil {
			return errors.Join(buildErr, err)
		}
	}
	return f.writeReport(cmd, report, buildErr)
}

// parseProvenance turns a --provenance value into the attestation's
// attributes as buildx takes them: false (none), true or min or max
// (mode=...), or attributes such as mode=max,version=v1.
func parseProvenance(v string) (string, error) {
	switch strings.TrimSpace(v) {
	case "false", "0", "":
		return "", nil
	case "true", "1", "min":
		return "mode=min", nil
	case "max":
		return "mode=max", nil
	}
	for _, field := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(field, "=")
		if !ok || k == "" {
			return "", usageErrorf("--provenance %q: want mode=min, mode=max or false", v)
		}
		if k == "mode" && val != "min" && val != "max" {
			return "", usageErrorf("--provenance %q: mode is min or max", v)
		}
	}
	return v, nil
}

// checkReleases fails with a usage error naming the valid releases when a
// --release is not in the plan or is given twice.
func checkReleases(p *plan.Plan, names []string) error {
	_, err := imagebuild.SelectReleases(p, names)
	return flagError(err)
}

// loadPlan loads the matrix of --matrix, plans every release and parses the
// --mirror values.
func loadPlan(cmd *cobra.Command, mirrorFlags []string) (*plan.Plan, refs.Mirrors, error) {
	m, err := LoadMatrix(cmd)
	if err != nil {
		return nil, nil, err
	}
	p, err := plan.New(m)
	if err != nil {
		return nil, nil, err
	}
	mirrors := refs.Mirrors{}
	for _, v := range mirrorFlags {
		if err := mirrors.ParseMirror(v); err != nil {
			return nil, nil, usageErrorf("%w", err)
		}
	}
	return p, mirrors, nil
}

// builderOptions turns the flags into imagebuild options.
func (f *buildFlags) builderOptions(matrixPath string, mirrors refs.Mirrors, progressOut io.Writer, secrets secretSet) ([]imagebuild.Option, error) {
	var outputs []imagebuild.Output
	for _, v := range f.outputs {
		out, err := imagebuild.ParseOutput(v)
		if err != nil {
			return nil, flagError(err)
		}
		outputs = append(outputs, out)
	}
	cacheFrom, err := parseCaches("--cache-from", f.cacheFrom)
	if err != nil {
		return nil, err
	}
	cacheTo, err := parseCaches("--cache-to", f.cacheTo)
	if err != nil {
		return nil, err
	}
	if _, err := f.format(); err != nil {
		return nil, err
	}
	progress, err := parseProgress(f.progress)
	if err != nil {
		return nil, err
	}
	provenance, err := parseProvenance(f.provenance)
	if err != nil {
		return nil, err
	}
	sbom, err := parseSBOM(f.sbom, mirrors)
	if err != nil {
		return nil, err
	}
	attach, err := f.sessionAttachables(secrets)
	if err != nil {
		return nil, err
	}
	if f.parallel < 1 {
		return nil, usageErrorf("--parallel %d: must be at least 1", f.parallel)
	}
	matrixDir, _ := filepath.Abs(filepath.Dir(matrixPath))
	revision, epoch, err := sourceInfo(matrixDir, f.revision, f.epoch)
	if err != nil {
		return nil, err
	}
	if f.revision == "" && gitDirty(matrixDir) {
		fmt.Fprintf(progressOut, "jetbake: warning: %s has uncommitted changes; the images' revision annotation (%.12s) does not describe them\n", matrixDir, revision)
	}
	return []imagebuild.Option{
		imagebuild.WithReleases(f.releases...),
		imagebuild.WithMirrors(mirrors),
		imagebuild.WithBaseDir(matrixDir),
		imagebuild.WithSource(revision, epoch),
		imagebuild.WithPush(f.push),
		imagebuild.WithOutputs(outputs...),
		imagebuild.WithCache(cacheOptions(cacheFrom), cacheOptions(cacheTo)),
		imagebuild.WithParallel(f.parallel),
		imagebuild.WithContinueOnError(f.continueOnError),
		imagebuild.WithControls(imagebuild.Controls{NoCache: f.noCache, Pull: f.pull, Provenance: provenance, SBOM: sbom}),
		imagebuild.WithProgress(progress, progressOut),
		imagebuild.WithRemoteOptions(remote.WithAuthFromKeychain(authn.DefaultKeychain)),
		imagebuild.WithBaseReader(baseinfo.New(baseinfo.WithRemoteOptions(remote.WithAuthFromKeychain(authn.DefaultKeychain)),
			baseinfo.WithCacheDir(baseinfo.DefaultCacheDir()))),
		imagebuild.WithSession(attach...),
		imagebuild.WithAdvice(buildAdvice()),
	}, nil
}

// dockerAuth gives BuildKit the registry credentials of the Docker config.
func dockerAuth() session.Attachable {
	return authprovider.NewDockerAuthProvider(authprovider.DockerAuthProviderConfig{
		AuthConfigProvider: authprovider.LoadAuthConfig(config.LoadDefaultConfigFile(os.Stderr)),
	})
}

// nodeSpecs reads the nodes of --builders and --node and checks them, and
// the address of --addr or BUILDKIT_HOST, before anything is dialed.
func (f *buildFlags) nodeSpecs() ([]daemon.NodeSpec, error) {
	var specs []daemon.NodeSpec
	if f.buildersFile != "" {
		fileSpecs, err := daemon.ReadBuildersFile(f.buildersFile)
		if err != nil {
			return nil, usageErrorf("%w", err)
		}
		specs = append(specs, fileSpecs...)
	}
	for _, v := range f.nodes {
		spec, err := daemon.ParseNodeFlag(v)
		if err != nil {
			return nil, usageErrorf("%w", err)
		}
		specs = append(specs, spec)
	}
	if err := daemon.CheckNodes(specs); err != nil {
		return nil, usageErrorf("%w", err)
	}
	addr, name := f.addr, "--addr"
	if addr == "" {
		addr, name = os.Getenv("BUILDKIT_HOST"), "BUILDKIT_HOST"
	}
	if addr != "" {
		if err := daemon.CheckAddr(addr); err != nil {
			return nil, usageErrorf("%s: %w", name, err)
		}
	}
	return specs, nil
}

// connectNodes connects to the nodes of specs (see daemon.ConnectNodes), or
// to the one daemon of --addr, BUILDKIT_HOST or a local buildkitd.
func (f *buildFlags) connectNodes(ctx context.Context, specs []daemon.NodeSpec, logf func(string, ...any)) ([]imagebuild.Node, func(), error) {
	var conns []daemon.Node
	if len(specs) == 0 {
		conn, err := daemon.Connect(ctx, f.daemonOptions(logf)...)
		if err != nil {
			return nil, nil, err
		}
		if err := daemon.CheckPlatform(ctx, conn.Client, plan.Platform); err != nil {
			conn.Close()
			return nil, nil, err
		}
		conns = []daemon.Node{{Name: "default", Conn: conn}}
	} else {
		var err error
		if conns, err = daemon.ConnectNodes(ctx, specs, plan.Platform, f.tls, logf); err != nil {
			return nil, nil, err
		}
	}
	nodes := make([]imagebuild.Node, len(conns))
	for i, c := range conns {
		nodes[i] = imagebuild.Node{Name: c.Name, Client: c.Conn.Client}
	}
	return nodes, func() { daemon.CloseNodes(conns) }, nil
}

func (f *buildFlags) daemonOptions(logf func(string, ...any)) []daemon.Option {
	opts := []daemon.Option{daemon.WithTLS(f.tls), daemon.WithKeepDaemon(f.keepDaemon), daemon.WithLogf(logf)}
	if f.addr != "" {
		opts = append(opts, daemon.WithAddr(f.addr))
	}
	if f.stateDir != "" {
		opts = append(opts, daemon.WithStateDir(f.stateDir))
	}
	if f.buildkitd != "" {
		opts = append(opts, daemon.WithBuildkitd(f.buildkitd))
	}
	return opts
}

// entrypointDir is the flag's value, else the folder of this jetbake's own
// entrypoint binaries (see package entrypoints).
func entrypointDir(ctx context.Context, flag string, logf func(string, ...any)) (string, error) {
	if flag != "" {
		return flag, nil
	}
	dir, _, err := entrypoints.Dir(ctx, entrypoints.WithLogf(logf))
	return dir, err
}

// sourceInfo finds the revision and SOURCE_DATE_EPOCH: flags first, then the
// SOURCE_DATE_EPOCH variable, then git in the matrix's folder; without git,
// no revision and 0.
func sourceInfo(dir, revision, epoch string) (string, int64, error) {
	if epoch == "" {
		epoch = os.Getenv("SOURCE_DATE_EPOCH")
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if revision == "" {
		revision = git("rev-parse", "HEAD")
	}
	if epoch == "" {
		epoch = git("log", "-1", "--format=%ct")
	}
	if epoch == "" {
		return revision, 0, nil
	}
	n, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || n < 0 {
		return "", 0, usageErrorf("source date epoch %q: want seconds since 1970 as a whole number", epoch)
	}
	return revision, n, nil
}

// gitDirty reports whether the git work tree at dir has uncommitted changes.
func gitDirty(dir string) bool {
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return err == nil && len(strings.TrimSpace(string(out))) > 0
}

// printSummary prints one line per release on stderr; the full report is
// what --metadata-file writes.
func printSummary(cmd *cobra.Command, r *imagebuild.Report) {
	w := cmd.ErrOrStderr()
	for _, rel := range r.Releases {
		line := fmt.Sprintf("%-12s %-17s %6.1fs", rel.Name, rel.Outcome, rel.DurationSeconds)
		if rel.Digest != "" {
			line += " " + rel.Digest
		}
		if len(rel.Tags) > 0 {
			line += " tags: " + strings.Join(rel.Tags, ", ")
		}
		if rel.Error != "" {
			line += " error: " + rel.Error
		}
		fmt.Fprintln(w, line)
	}
}
