package cli

import (
	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/bake"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/selection"
)

// buildFlags are the flags of `jetbake build`: o holds those that set an
// option as they are, the others are parsed into o by options.
type buildFlags struct {
	o bake.Options
	daemonFlags
	outputs, mirrors, cacheFrom, cacheTo, secrets, ssh, tags        []string
	metadataFile, progress, provenance, sbom, list, revision, epoch string
	timings                                                         bool
	overrides                                                       overrideFlags
	format                                                          func() (format, error)
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
	fl.StringSliceVar(&f.o.Releases, "release", nil, "build only this release (repeatable, or comma-separated)")
	fl.BoolVar(&f.o.Push, "push", false, "push to the matrix's repository and tag when every release succeeded")
	fl.StringArrayVar(&f.outputs, "output", nil, "also write locally: type=oci,dest=DIR or type=docker,dest=FILE (repeatable)")
	fl.StringVar(&f.metadataFile, "metadata-file", "", "write per-release digests, tags, bases, targets, durations and outcomes as JSON")
	fl.StringArrayVar(&f.mirrors, "mirror", nil, "rewrite a base registry: REGISTRY=HOST[:PORT] (repeatable)")
	fl.StringVar(&f.o.BuildPath, "build-path", "", "how amd64 nodes build the routers, over the matrix's build_path: auto (cross in the release's cross_build_base when it has one, else QEMU), cross or qemu; arm64 nodes build natively (see docs/matrix.md#cross-builds)")
	fl.IntVar(&f.o.Parallel, "parallel", imagebuild.DefaultParallel, "releases built at once on each node")
	fl.StringVar(&f.progress, "progress", "auto", "progress output: auto, tty, plain, rawjson, quiet or none")
	fl.BoolVar(&f.o.ContinueOnError, "continue-on-error", false, "build every release even after one failed (nothing is tagged unless all succeed)")
	fl.StringArrayVar(&f.cacheFrom, "cache-from", nil, "import cache, as buildx: type=registry,ref=REF, type=local,src=DIR, type=s3,bucket=B,region=R, type=gha (url and token from the runner) or type=azblob; each release gets its own ref tag, folder, name or scope (repeatable)")
	fl.StringArrayVar(&f.cacheTo, "cache-to", nil, "export cache, as buildx: type=registry,ref=REF,mode=max, type=local,dest=DIR, type=s3,..., type=gha,mode=max, type=azblob,... or type=inline (repeatable)")
	fl.StringArrayVar(&f.secrets, "secret", nil, "hand a secret to every router stage (RUN --mount=type=secret,id=ID): id=ID,src=FILE or id=ID,env=VAR (repeatable); it reaches no image, cache, log or metadata. id=GIT_AUTH_TOKEN.<host> (or GIT_AUTH_HEADER.<host>) authenticates a git router context; JETBAKE_GIT_AUTH_TOKEN gives it from the environment")
	fl.StringArrayVar(&f.ssh, "ssh", nil, "forward an SSH agent or keys to every router stage (RUN --mount=type=ssh): default (SSH_AUTH_SOCK), default=SOCKET or ID=KEYFILE[,KEYFILE] (repeatable)")
	fl.StringVar(&f.sbom, "sbom", "false", "SBOM attestation attached to each image: true (BuildKit's scanner, docker/buildkit-syft-scanner, through --mirror), generator=IMAGE, or false")
	fl.StringVar(&f.list, "list", "", "list the releases and exit, as buildx bake --list: releases, or type=releases,format=json")
	addOverrideFlags(cmd, &f.overrides)
	f.format = addFormatFlag(cmd)
	addDaemonFlags(cmd, &f.daemonFlags)
	fl.StringArrayVar(&f.nodes, "node", nil, "spread releases over BuildKit nodes: NAME=ADDR (repeatable); a release sticks to one node while it is healthy")
	fl.StringVar(&f.buildersFile, "builders", "", "JSON file of nodes with TLS settings: {\"nodes\": [{\"name\", \"addr\", \"tls\": {\"ca_cert\", \"cert\", \"key\"}}]}")
	fl.IntVar(&f.o.Retries, "retries", 2, "retry a release whose node failed (unreachable, daemon gone) on another node, up to N times")
	fl.StringVar(&f.o.EntrypointDir, "entrypoint-dir", "", "folder with the linux/arm64 jetbake-entrypoint, jetbake-cudaprobe and jetbake-probe (default: this jetbake's own: embedded, next to it, or built from its module source)")
	fl.StringVar(&f.o.LockFile, "lock-file", "", "base image lock file (default: matrix.lock.json next to the matrix, when it exists)")
	fl.BoolVar(&f.o.CheckLock, "check-lock", false, "fail before building when a base tag has moved from its locked digest")
	fl.StringVar(&f.revision, "revision", "", "your source revision for org.opencontainers.image.revision (default: git HEAD of the matrix's folder); jetbake's own version goes in io.jetbake.version")
	fl.StringArrayVar(&f.tags, "tag", nil, "add a tag to each release, with the matrix's placeholders and {sha}, e.g. '{version}-jetpack{jetpack}-{sha}' (repeatable)")
	fl.BoolVar(&f.o.Controls.NoCache, "no-cache", false, "build every step anew, without BuildKit's cache")
	fl.BoolVar(&f.o.RememberVerdicts, "remember-verdicts", true, "remember each release's passing smoke run and audit in <user cache dir>/jetbake/verdicts and run neither again on the same routers, runtime stage files, bases and jetbake (digested inside BuildKit); --remember-verdicts=false or --no-cache runs both on every build")
	fl.BoolVar(&f.o.Controls.Pull, "pull", false, "resolve every base image from its registry anew")
	fl.BoolVar(&f.timings, "timings", false, "print where the build's time went, phase by phase, from BuildKit's step timestamps (--metadata-file always has them)")
	fl.StringVar(&f.provenance, "provenance", "mode=min", "provenance attestation attached to each image: mode=min, mode=max, or false")
	fl.StringVar(&f.epoch, "source-date-epoch", "", "timestamp of every file and config (default: SOURCE_DATE_EPOCH, else the commit time)")
	AddMatrixFlags(cmd, "")
	return cmd
}

// runBuild builds with package bake what the flags say and prints the report.
func runBuild(cmd *cobra.Command, f *buildFlags) error {
	p, mirrors, err := loadPlan(cmd, f.mirrors)
	if err != nil {
		return err
	}
	if f.list != "" {
		if _, err := selection.Releases(p, f.o.Releases); err != nil {
			return flagError(err) // as the build would refuse them
		}
		return listReleases(cmd, p, f.list, f.format)
	}
	o, err := f.options(cmd, p, mirrors)
	if err != nil {
		return err
	}
	report, err := bake.Build(cmd.Context(), p, o)
	if report == nil {
		return flagError(err)
	}
	return f.printReport(cmd, report, err)
}
