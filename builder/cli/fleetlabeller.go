package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetbake/jetbake/builder/bake"
	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/fleet/labellerimage"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/version"
)

// labellerFlags are the flags of `jetbake fleet` that make, push and name
// the labeller image.
type labellerFlags struct {
	on             bool
	image          string
	push, binaries string
	progress       string
	daemonFlags
	format func() (format, error)
}

// pushFlags are the flags that --push-labeller reads; fleet's other flags
// write manifests, which --push-labeller does not.
func pushFlags() []string {
	return []string{"push-labeller", "labeller-binaries", "progress", "format",
		"addr", "tlscacert", "tlscert", "tlskey", "tlsservername", "keep-daemon", "state-dir", "buildkitd"}
}

// addLabellerFlags adds the labeller's flags to fleet.
func addLabellerFlags(cmd *cobra.Command, f *labellerFlags) {
	fl := cmd.Flags()
	fl.BoolVar(&f.on, "labeller", false, "add the labelling DaemonSet and its RBAC (for clusters without node-feature-discovery), running --labeller-image")
	fl.StringVar(&f.image, "labeller-image", "", "the labeller's image, whose entrypoint is jetbake (implies --labeller; default: "+labellerimage.Repository+":VERSION, this release's)")
	fl.StringVar(&f.push, "push-labeller", "", "make the labeller image (jetbake for linux/amd64 and linux/arm64, FROM scratch) with BuildKit, push it to this reference and exit: no manifests are written")
	fl.StringVar(&f.binaries, "labeller-binaries", "dist", "with --push-labeller, the folder of jetbake-linux-amd64 and jetbake-linux-arm64; when not given, this jetbake is its own platform's, and dist/ of 'make release' gives the other's")
	fl.StringVar(&f.progress, "progress", "auto", "with --push-labeller, BuildKit's progress: auto, tty, plain, rawjson, quiet or none")
	f.format = addFormatFlag(cmd)
	addDaemonFlags(cmd, &f.daemonFlags)
}

// checkModeFlags refuses the flags of the mode fleet does not run: those of
// the manifests with --push-labeller, and those of the push without it.
func (f *labellerFlags) checkModeFlags(cmd *cobra.Command) error {
	var wrong []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if (f.push != "") != slices.Contains(pushFlags(), fl.Name) && (f.push != "" || fl.Name != "format") {
			wrong = append(wrong, "--"+fl.Name)
		}
	})
	if len(wrong) == 0 {
		return nil
	}
	if f.push != "" {
		return usageErrorf("%s: --push-labeller only makes and pushes the labeller image, and writes no manifests: run jetbake fleet again without --push-labeller, with --labeller-image %s", wrong[0], f.push)
	}
	return usageErrorf("%s: it is for --push-labeller, which makes and pushes the labeller image; without it, fleet connects to no BuildKit daemon", wrong[0])
}

// labellerImage is the labeller's image, "" when no labeller is asked for:
// --labeller-image, else with --labeller the running release's.
func (f *labellerFlags) labellerImage() (string, error) {
	if f.image != "" || !f.on {
		return f.image, nil
	}
	ref, err := labellerimage.DefaultRef(version.Get())
	if err != nil {
		return "", usageErrorf("--labeller: %v: give --labeller-image IMAGE, e.g. one pushed with 'jetbake fleet --push-labeller REGISTRY/jetbake-labeller:TAG'", err)
	}
	return ref, nil
}

// runPushLabeller makes the labeller image and pushes it to --push-labeller.
func runPushLabeller(cmd *cobra.Command, f *labellerFlags) error {
	form, err := f.format()
	if err != nil {
		return err
	}
	if err := labellerimage.CheckRef(f.push); err != nil {
		return usageErrorf("--push-labeller %w", err)
	}
	mode, err := parseProgress(f.progress)
	if err != nil {
		return err
	}
	epoch, err := labellerEpoch()
	if err != nil {
		return err
	}
	bins, err := f.labellerBinaries(cmd)
	if err != nil {
		return err
	}
	d, err := f.daemons()
	if err != nil {
		return err
	}
	if err := checkDockerConfig(); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "jetbake: "+format+"\n", args...) }
	for _, b := range bins {
		logf("the labeller image holds %s for %s (sha256 %.12s)", b.Path, b.Platform(), b.SHA256)
	}
	if epoch.IsZero() {
		epoch = time.Unix(0, 0).UTC()
		logf("this jetbake (%s) records no commit time: the labeller image is stamped 1970-01-01 (set SOURCE_DATE_EPOCH to choose)", version.Get())
	}
	ctx := cmd.Context()
	conn, err := daemon.Connect(ctx, append([]daemon.Option{daemon.WithTLS(d.TLS), daemon.WithLogf(logf)}, d.Daemon...)...)
	if err != nil {
		return daemonFlagError(err)
	}
	defer conn.Close()
	display, err := progress.New(ctx, mode, stderr, nil)
	if err != nil {
		return usageErrorf("--progress %s: %w", f.progress, err)
	}
	tool := version.Get()
	res, err := labellerimage.Push(ctx, conn.Client, f.push, bins, labellerimage.WithEpoch(epoch),
		labellerimage.WithStatus(display.Channel("labeller")), labellerimage.WithSession(bake.DockerAuth()),
		labellerimage.WithVersion(tool.Version, tool.Commit))
	display.Close()
	if err != nil {
		return err
	}
	logf("pushed the labeller image %s for %s: write the manifests with jetbake fleet --labeller-image %s", f.push, "linux/amd64 and linux/arm64", res.Pinned)
	if form == formatJSON {
		return writeJSON(cmd, res)
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), res.Pinned)
	return err
}

// labellerBinaries finds and checks the binaries the image holds: both
// from --labeller-binaries when it is given, else this jetbake for its own
// platform and dist/ for the other.
func (f *labellerFlags) labellerBinaries(cmd *cobra.Command) ([]labellerimage.Binary, error) {
	self := ""
	if !cmd.Flags().Changed("labeller-binaries") {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find this jetbake's binary for the labeller image: %w (give --labeller-binaries DIR)", err)
		}
		self = exe
	}
	bins, err := labellerimage.Find(f.binaries, self)
	var missing *labellerimage.MissingError
	if errors.As(err, &missing) {
		return nil, usageErrorf("--labeller-binaries: %v: run 'make release' in jetbake's checkout (it writes dist/%s and dist/%s), or give --labeller-binaries DIR with both",
			err, labellerimage.FileName("amd64"), labellerimage.FileName("arm64"))
	}
	if err != nil {
		return nil, err
	}
	return labellerimage.Check(bins)
}

// labellerEpoch is the time the labeller image is stamped with:
// SOURCE_DATE_EPOCH, else this jetbake's commit time, else 1970.
func labellerEpoch() (time.Time, error) {
	if v := strings.TrimSpace(os.Getenv("SOURCE_DATE_EPOCH")); v != "" {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil || sec < 0 {
			return time.Time{}, usageErrorf("SOURCE_DATE_EPOCH %q: want seconds since 1970 as a whole number, or unset it to stamp the image with this jetbake's commit time", v)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	return version.Get().CommitTime, nil
}
