package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/gitcontext"
	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/plan"
)

func newLockCommand() *cobra.Command {
	f := &lockFlags{}
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Pin every base image of the matrix to its digest in matrix.lock.json",
		Long: "lock resolves the build and runtime base of every release to the digest its tag points at now and\n" +
			"writes matrix.lock.json next to the matrix. It reads what each base holds (its CUDA version and its\n" +
			"Tegra or SBSA flavour, from the image's files, without running it), records it, and refuses a base\n" +
			"that does not fit a release using it. 'jetbake build' then builds from those digests, and\n" +
			"'jetbake build --check-lock' (or 'jetbake lock --check') fails when a tag has moved since, naming\n" +
			"what the base held and holds now when that changed too.\n\n" +
			"A git router context is resolved too, with git ls-remote as BuildKit resolves it, to the commit its\n" +
			"tag or branch names now; 'jetbake build' then builds that commit and fails, naming both commits, once\n" +
			"the ref names another. A private repository's credentials come from --secret\n" +
			"id=GIT_AUTH_TOKEN.<host>,env=VAR or JETBAKE_GIT_AUTH_TOKEN, as for the build.",
		Example: "  jetbake lock\n  jetbake lock --check\n  jetbake lock --mirror nvcr.io=127.0.0.1:5000",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runLock(cmd, f) },
	}
	f.getFormat = addFormatFlag(cmd)
	cmd.Flags().StringArrayVar(&f.mirrors, "mirror", nil, "rewrite a base registry: REGISTRY=HOST[:PORT] (repeatable)")
	cmd.Flags().StringVar(&f.lockFile, "lock-file", "", "lock file (default: matrix.lock.json next to the matrix)")
	cmd.Flags().BoolVar(&f.check, "check", false, "only check that no locked tag has moved; write nothing")
	cmd.Flags().StringArrayVar(&f.secrets, "secret", nil, "credentials of a private git router context: id=GIT_AUTH_TOKEN.<host>,env=VAR or id=GIT_AUTH_HEADER.<host>,src=FILE (repeatable), as for 'jetbake build'")
	f.deadline = addTimeoutFlag(cmd)
	AddMatrixFlags(cmd, "")
	return cmd
}

// lockFlags are the flags of `jetbake lock`.
type lockFlags struct {
	mirrors, secrets []string
	lockFile         string
	check            bool
	getFormat        func() (format, error)
	deadline         func(parent context.Context) (context.Context, context.CancelFunc, error)
}

// runLock pins the matrix's bases and git context, or with --check checks
// the pins.
func runLock(cmd *cobra.Command, f *lockFlags) error {
	format, err := f.getFormat()
	if err != nil {
		return err
	}
	ctx, cancel, err := registryContext(cmd.Context(), f.deadline)
	if err != nil {
		return err
	}
	defer cancel()
	p, mirrors, err := loadPlan(cmd, f.mirrors)
	if err != nil {
		return err
	}
	lockFile := f.lockFile
	if lockFile == "" {
		if lockFile, err = lock.DefaultPath(MatrixPath(cmd)); err != nil {
			return flagError(err)
		}
	}
	secrets, err := newSecretSet(f.secrets, p.Context())
	if err != nil {
		return err
	}
	resolve := func(ref string) (string, error) { return mirrors.Rewrite(ref, "") }
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	if f.check {
		return checkLock(ctx, cmd, lockFile, p, resolve, auth, secrets)
	}
	lf, err := lock.Resolve(ctx, p, resolve, auth)
	if err != nil {
		return err
	}
	if lf.GitContexts, err = lock.ResolveGit(ctx, p, secrets.store); err != nil {
		return err
	}
	if err := lf.Write(lockFile); err != nil {
		return err
	}
	return printLock(cmd, format, lockFile, lf, lock.CrossBases(p))
}

// checkLock is `jetbake lock --check`: no locked tag or git ref has moved.
func checkLock(ctx context.Context, cmd *cobra.Command, lockFile string, p *plan.Plan, resolve func(string) (string, error), auth remote.Option, secrets secretSet) error {
	lf, err := lock.Read(lockFile)
	if err != nil {
		return err
	}
	if err := errors.Join(lf.CheckAll(ctx, p, resolve, auth), lf.CheckGit(ctx, p, secrets.store)); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %d bases%s, none moved\n", lockFile, len(lf.Bases), gitCount(lf))
	if missing := lf.MissingContents(p); len(missing) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "jetbake: %s records no contents for %d bases (written before jetbake read bases): run 'jetbake lock' to record their CUDA flavour and version\n",
			lockFile, len(missing))
	}
	return nil
}

func printLock(cmd *cobra.Command, f format, path string, lf *lock.File, cross []string) error {
	if f == formatJSON {
		return writeJSON(cmd, lf)
	}
	w := cmd.OutOrStdout()
	refsSorted := make([]string, 0, len(lf.Bases))
	for r := range lf.Bases {
		refsSorted = append(refsSorted, r)
	}
	slices.Sort(refsSorted)
	for _, r := range refsSorted {
		line := r + "@" + lf.Bases[r]
		if info, ok := lf.Contents[r]; ok {
			line += "  " + info.Describe()
		} else if slices.Contains(cross, r) {
			line += "  cross build base, linux/amd64"
		}
		fmt.Fprintln(w, line)
	}
	for _, c := range slices.Sorted(maps.Keys(lf.GitContexts)) {
		pin := lf.GitContexts[c]
		fmt.Fprintf(w, "%s: %s %s\n", gitcontext.Redact(c), pin.Ref, pin.Commit)
	}
	fmt.Fprintf(w, "wrote %s\n", path)
	return nil
}

// gitCount is ", 1 git context" when lf pins one, else "".
func gitCount(lf *lock.File) string {
	if len(lf.GitContexts) == 0 {
		return ""
	}
	return fmt.Sprintf(", %d git context", len(lf.GitContexts))
}
