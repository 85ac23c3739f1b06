package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/refs"
)

// evidenceFlags say where jetbake learns which image a digest is and which
// image is current, and how old evidence may be.
type evidenceFlags struct {
	metadataFile string
	registry     bool
	repository   string
	maxAge       string
	deadline     func(parent context.Context) (context.Context, context.CancelFunc, error)
}

// addEvidenceFlags adds --metadata-file, --registry, --repository and
// --max-evidence-age to cmd.
func addEvidenceFlags(cmd *cobra.Command, f *evidenceFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.metadataFile, "metadata-file", "", "report of 'jetbake build --metadata-file': the digests built for each release, the latest first")
	fl.BoolVar(&f.registry, "registry", true, "ask the registry for digests the metadata file lacks (--registry=false stays offline)")
	fl.StringVar(&f.repository, "repository", "",
		"with --registry, read the digests of the matrix's tags from this repository instead of the matrix's image.repository (it reads, never pushes)")
	fl.StringVar(&f.maxAge, "max-evidence-age", "30d", "how old evidence may be: days such as 30d, or a duration such as 720h")
	f.deadline = addTimeoutFlag(cmd)
}

// age reads --max-evidence-age.
func (f *evidenceFlags) age() (time.Duration, error) {
	d, err := evidence.ParseAge(f.maxAge)
	if err != nil {
		return 0, usageErrorf("--max-evidence-age: %w", err)
	}
	return d, nil
}

// resolver builds the chain the flags ask for: the metadata file first,
// then the registry.
func (f *evidenceFlags) resolver(m *matrix.Matrix) (evidence.Resolver, error) {
	var chain evidence.Chain
	if f.metadataFile != "" {
		md, err := evidence.ReadMetadata(f.metadataFile)
		if err != nil {
			return nil, err
		}
		chain = append(chain, md)
	}
	if f.registry {
		if err := checkDockerConfig(); err != nil {
			return nil, err
		}
		reg, err := evidence.NewRegistryResolver(m, f.repository, remote.WithAuthFromKeychain(authn.DefaultKeychain))
		if err != nil {
			return nil, usageErrorf("--repository: %w", err)
		}
		chain = append(chain, reg)
	}
	return chain, nil
}

// options turns the flags into evidence options.
func (f *evidenceFlags) options(m *matrix.Matrix) ([]evidence.Option, error) {
	age, err := f.age()
	if err != nil {
		return nil, err
	}
	r, err := f.resolver(m)
	if err != nil {
		return nil, err
	}
	return []evidence.Option{evidence.WithResolver(r), evidence.WithMaxAge(age),
		evidence.WithMetadataFix("pass --metadata-file with the report of the latest 'jetbake build'")}, nil
}

// newEvidenceCommand builds `jetbake evidence` with add and report.
func newEvidenceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evidence",
		Short: "Keep and read evidence that an image works on a real Jetson",
		Long: "A release may claim the tier \"supported\" only with evidence from a real Jetson running its exact image,\n" +
			"of level serve: a CUDA kernel ran on the GPU (--kernel) and the router served embeddings of a model (--serve).\n" +
			"Collect it inside the image on the Jetson, with a small embedding model's folder (config.json, tokenizer.json,\n" +
			"the weights) mounted at /model:\n\n" +
			"  docker run --rm --runtime nvidia -e JETBAKE_IMAGE_DIGEST=sha256:... -v $PWD:/out -v MODEL_DIR:/model:ro \\\n" +
			"    --entrypoint /usr/local/bin/jetbake-probe IMAGE@sha256:... --smoke --kernel --serve /model --out /out/evidence.json\n\n" +
			"then keep it with 'jetbake evidence add evidence.json'. 'jetbake init --gate' writes a workflow that does\n" +
			"this on a self-hosted Jetson runner.\n\n" +
			"An app's image (a matrix with \"app\") has no router to serve: the probe runs its app check by itself\n" +
			"(torch finds CUDA and the Jetson's GPU, a small CUDA matrix product is finite), and \"supported\" needs\n" +
			"level app, passing cuda-kernel and app checks: run the probe with --smoke --kernel --out /out/evidence.json\n" +
			"and no model. Evidence of an app's image is refused for a router's matrix, and the other way round.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newEvidenceAddCommand(), newEvidenceReportCommand())
	return cmd
}

// newEvidenceAddCommand builds `jetbake evidence add`.
func newEvidenceAddCommand() *cobra.Command {
	var f evidenceFlags
	cmd := &cobra.Command{
		Use:   "add FILE...",
		Short: "Check evidence against the schema and the matrix, and store it next to the matrix",
		Long: "add reads each file the probe wrote, checks it against the schema, finds the release its digest was\n" +
			"built for (in --metadata-file, else the image's io.jetbake.release annotation in the registry), and\n" +
			"refuses it, naming the rule, when a check failed or was skipped, the digest is not one jetbake built,\n" +
			"the host's L4T major or device is not the release's, the revision differs, it is older than\n" +
			"--max-evidence-age, the image's kind (router or app) is not the matrix's, or the release claims\n" +
			"\"supported\" and the evidence lacks a passing cuda-kernel or serve check (level serve; for an app,\n" +
			"cuda-kernel and app checks, level app). Accepted evidence goes to evidence/<release>/<digest>-<device>-<date>.json.",
		Example: "  jetbake evidence add evidence.json --metadata-file build.json\n" +
			"  jetbake evidence add orin.json thor.json",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runEvidenceAdd(cmd, &f, args) },
	}
	addEvidenceFlags(cmd, &f)
	AddMatrixFlags(cmd, "")
	return cmd
}

// runEvidenceAdd admits and stores each file, reporting each refusal.
func runEvidenceAdd(cmd *cobra.Command, f *evidenceFlags, files []string) error {
	m, err := LoadMatrix(cmd)
	if err != nil {
		return err
	}
	age, err := f.age()
	if err != nil {
		return err
	}
	r, err := f.resolver(m)
	if err != nil {
		return err
	}
	ctx, cancel, err := f.deadline(cmd.Context())
	if err != nil {
		return err
	}
	defer cancel()
	store := evidence.StoreFor(m)
	var failed []string
	code := ExitFailure
	for _, file := range files {
		path, err := addOne(ctx, file, m, r, store, age)
		if err != nil {
			msg := registryFaultWording(cmd, err)
			if !strings.HasPrefix(msg, file+":") && !strings.Contains(msg, " "+file+" ") {
				msg = file + ": " + msg // name the file once
			}
			fmt.Fprintln(cmd.ErrOrStderr(), msg)
			failed = append(failed, file)
			if ExitCode(err) == ExitUsage {
				code = ExitUsage // a file that does not read is bad input, as for 'evidence report'
			}
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: stored as %s\n", file, path)
	}
	if len(failed) > 0 {
		// Each file that was not stored has its one line, naming it, above.
		return &ExitError{Code: code}
	}
	return nil
}

// registryFaultWording is err's sentence with a registry's fault, when
// the sentence ends with it, worded with cmd's flags as every registry
// command words it (registryFlagError): a deadline that passed names
// --timeout, a name that does not resolve the command's offline way.
func registryFaultWording(cmd *cobra.Command, err error) string {
	msg := err.Error()
	var re *refs.RegistryError
	if !errors.As(err, &re) || !strings.HasSuffix(msg, re.Error()) {
		return msg
	}
	return strings.TrimSuffix(msg, re.Error()) + registryFlagError(cmd, re).Error()
}

// addOne reads, admits and stores one file.
func addOne(ctx context.Context, file string, m *matrix.Matrix, r evidence.Resolver, s evidence.Store, age time.Duration) (string, error) {
	ev, err := evidence.ReadFile(file)
	if err != nil {
		return "", err
	}
	a, err := evidence.Admit(ctx, ev, m, r, time.Now(), age)
	if err != nil {
		return "", refusedFlagError(err)
	}
	return s.Add(a)
}

// refusedFlagError words evidence of an image jetbake did not build for
// a release, when the refusal is the whole error, with --metadata-file.
// Other errors are returned as they are.
func refusedFlagError(err error) error {
	var re *evidence.RefusedError
	if !errors.As(err, &re) || re.Reason != evidence.ReasonUnknownDigest || err.Error() != re.Error() {
		return err
	}
	worded := *re
	worded.Fix = "probe an image that 'jetbake build' produced, and pass its --metadata-file or let jetbake reach the registry"
	return &worded
}

// newEvidenceReportCommand builds `jetbake evidence report`.
func newEvidenceReportCommand() *cobra.Command {
	var getFormat func() (format, error)
	cmd := &cobra.Command{
		Use:   "report FILE",
		Short: "Write evidence as an issue body to paste, pass or not",
		Long: "report checks FILE against the schema and writes it as Markdown for an issue: the image, the host,\n" +
			"the CUDA kernel and serving runs (an app's app check in place of serving), the build's audit verdict\n" +
			"per SM (runs, JIT, partial, no code, none; 'evidence add' records it in the evidence it stores), the level the evidence\n" +
			"reached (smoke, cuda-kernel, serve, app), every check with its detail, and the evidence itself\n" +
			"folded at the end. It does not judge the evidence against the matrix: a failing probe is worth\n" +
			"reporting too (the issue form 'jetbake init --gate' writes takes it).",
		Example: "  jetbake evidence report evidence.json > issue.md",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := getFormat()
			if err != nil {
				return err
			}
			ev, err := evidence.ReadFile(args[0])
			if err != nil {
				return err
			}
			return writeEvidence(cmd.OutOrStdout(), ev, f)
		},
	}
	getFormat = addFormatFlag(cmd, formatMarkdown, formatJSON)
	return cmd
}

// writeEvidence writes evidence as an issue body or as its JSON.
func writeEvidence(w io.Writer, ev *evidence.Evidence, f format) error {
	var out string
	if f == formatJSON {
		data, err := ev.Marshal()
		if err != nil {
			return err
		}
		out = string(data)
	} else {
		body, err := evidence.IssueMarkdown(ev)
		if err != nil {
			return err
		}
		out = body
	}
	_, err := io.WriteString(w, out)
	return err
}

// strictCheck is what `jetbake validate --strict` runs after the matrix
// loaded: the evidence errors, or nil without --strict.
type strictCheck func(ctx context.Context, m *matrix.Matrix) ([]matrix.FieldError, error)

// addStrictFlags adds --strict and the evidence flags to validate, and
// returns the check to run on the loaded matrix. The error it returns is a
// usage error (a bad --max-evidence-age) or an unreadable --metadata-file.
func addStrictFlags(cmd *cobra.Command) strictCheck {
	var strict bool
	var f evidenceFlags
	cmd.Flags().BoolVar(&strict, "strict", false,
		"also fail when a release claims tier \"supported\" without passing evidence of level serve (cuda-kernel and serve checks; for an app, level app: cuda-kernel and app checks) for its current digest (see 'jetbake evidence')")
	addEvidenceFlags(cmd, &f)
	return func(ctx context.Context, m *matrix.Matrix) ([]matrix.FieldError, error) {
		if !strict {
			return nil, nil
		}
		opts, err := f.options(m)
		if err != nil {
			return nil, err
		}
		ctx, cancel, err := f.deadline(ctx)
		if err != nil {
			return nil, err
		}
		defer cancel()
		return evidence.CheckStrict(ctx, m, opts...), nil
	}
}
