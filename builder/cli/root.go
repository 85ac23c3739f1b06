// Package cli holds jetbake's commands. Commands write to the command's
// OutOrStdout and ErrOrStderr and never exit the process: they return
// errors, an *ExitError where the exit status matters, and Run maps them to
// an exit status and prints them once.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/builder/version"
	"github.com/jetbake/jetbake/computecap"
)

// Exit statuses of jetbake.
const (
	// ExitOK means success.
	ExitOK = 0
	// ExitFailure means the command ran and the answer is "no": validate's
	// invalid matrix, no binary for a GPU, a failed build.
	ExitFailure = 1
	// ExitUsage means bad usage or input: an unknown flag, a flag's value
	// that does not parse, a missing argument, a compute capability that is
	// not one or that jetbake does not know, a matrix that does not
	// validate given to another command than validate.
	ExitUsage = 2
)

// MatrixFlag is the name of the persistent flag that names the matrix file
// (-f, as docker buildx bake -f names its file); --matrix is its older name.
const MatrixFlag = "file"

// matrixFlagOld is MatrixFlag's older name, still accepted.
const matrixFlagOld = "matrix"

// AllowFlag is the persistent flag that grants the matrix access beyond
// its repository, as `docker buildx bake --allow fs.read=PATH` does.
const AllowFlag = "allow"

// ExitError carries the exit status a command wants. Err is printed once by
// Run; a nil Err means the command has already reported the problem.
type ExitError struct {
	// Code is the exit status.
	Code int
	// Err is the problem, or nil when it was already written.
	Err error
}

// Error returns Err's message, or the exit status when Err is nil.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// usageErrorf returns an *ExitError with status ExitUsage.
func usageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// ExitCode returns the exit status for an error returned by a command:
// ExitOK for nil, the Code of an *ExitError, ExitUsage for bad input (an
// input file jetbake cannot take or read, a matrix that does not validate,
// which only validate reports as its finding, an unknown release, an error
// marked BadInput), ExitFailure otherwise.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var fe *inputfile.Error
	var re *plan.UnknownReleaseError
	var ve *matrix.ValidationError
	var bad badInput
	if errors.As(err, &fe) || errors.As(err, &re) || errors.As(err, &ve) || (errors.As(err, &bad) && bad.BadInput()) {
		return ExitUsage
	}
	return ExitFailure
}

// badInput is an error of input a command cannot use: a JSON file that
// does not read (matrix.FileError), a repository that is not one, a
// sysroot that is missing. Packages mark such errors with BadInput.
type badInput interface {
	error
	BadInput() bool
}

// Option changes the root command that NewRootCommand builds.
type Option func(*rootConfig)

// rootConfig holds the options of NewRootCommand.
type rootConfig struct {
	version  string
	commands []func() *cobra.Command
}

// WithVersion sets the version that `jetbake --version` and `jetbake
// version` print.
func WithVersion(v string) Option {
	return func(c *rootConfig) { c.version = v }
}

// WithCommands adds subcommands, each built by a constructor so that every
// root command gets fresh flag state. The package's own commands (validate,
// plan, compat, build, lock) are always present.
func WithCommands(constructors ...func() *cobra.Command) Option {
	return func(c *rootConfig) { c.commands = append(c.commands, constructors...) }
}

// builtinCommands are the constructors of the commands this package
// defines; a new command of the package is added here.
func builtinCommands() []func() *cobra.Command {
	return []func() *cobra.Command{newValidateCommand, newPlanCommand, newCompatCommand, newBuildCommand, newCheckCommand, newLockCommand, newEvidenceCommand, newSupportCommand, newDoctorCommand, newFleetCommand, newPickCommand, newAuditCommand, newFactsCommand, newInitCommand, newVersionCommand}
}

// NewRootCommand builds the jetbake command with its subcommands.
func NewRootCommand(opts ...Option) *cobra.Command {
	cfg := rootConfig{version: version.Get().String()}
	for _, o := range opts {
		o(&cfg)
	}
	root := &cobra.Command{
		Use:   "jetbake",
		Short: "Build text-embeddings-router images for NVIDIA Jetson from one matrix",
		Long: "jetbake builds one image per JetPack release from matrix.json, each holding a router binary per\n" +
			"SM target and an entrypoint that picks the binary for the GPU it finds.",
		Example: "  jetbake validate\n  jetbake plan --release jetpack6.2\n  jetbake compat 8.7",
		Version: cfg.version,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q; run 'jetbake --help' for the list", args[0])
			}
			return cmd.Help()
		},
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(flagParseError)
	// --version prints what 'jetbake version' prints.
	root.SetVersionTemplate(versionLine("{{.Version}}"))
	for _, newCmd := range append(builtinCommands(), cfg.commands...) {
		root.AddCommand(newCmd())
	}
	addCompletions(root)
	return root
}

// Run runs jetbake with args (without the program name), writing to stdout
// and stderr, and returns the exit status. It prints a command's error once.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	root := NewRootCommand(opts...)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitCode(err)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Err != nil {
		msg := registryFlagError(cmd, err).Error()
		if cmd != nil && wantsJSON(cmd) {
			writeJSONError(stdout, msg, code, fieldErrors(err))
		}
		if !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		fmt.Fprint(stderr, msg)
	}
	return code
}

// registryFlagError words a registry's error with the flags of cmd, when
// the registry's error is the whole error: a deadline that passed (a
// refs.RegistryError that is TimedOut) names --timeout, a name that does
// not resolve (Unresolved) the way to work offline, --mirror or
// --registry=false. Other errors are returned as they are.
func registryFlagError(cmd *cobra.Command, err error) error {
	var re *refs.RegistryError
	if cmd == nil || !errors.As(err, &re) || err.Error() != re.Error() {
		return err
	}
	worded := *re
	switch {
	case re.TimedOut && cmd.Flags().Lookup("timeout") != nil:
		worded.Fix += " with --timeout"
	case re.Unresolved && cmd.Flags().Lookup("mirror") != nil:
		worded.Fix += "; offline, " + offlineMirror
	case re.Unresolved && cmd.Flags().Lookup("registry") != nil:
		worded.Fix += "; offline, pass --registry=false (and --metadata-file for the digests)"
	default:
		return err
	}
	return &worded
}

// wantsJSON reports whether cmd was asked for --format json.
func wantsJSON(cmd *cobra.Command) bool {
	fl := cmd.Flags().Lookup("format")
	return fl != nil && fl.Value.String() == string(formatJSON)
}

// jsonError is what a command asked for --format json prints on stdout when
// it fails.
type jsonError struct {
	// Error is the one-sentence message also printed on stderr.
	Error string `json:"error"`
	// ExitCode is the exit status: 1 a failure of the work, 2 bad usage or input.
	ExitCode int `json:"exit_code"`
	// Errors are the matrix's problems when it does not validate, each with
	// its path, value, line and fix, as 'jetbake validate --format json'
	// lists them.
	Errors []matrix.FieldError `json:"errors,omitempty"`
}

func writeJSONError(w io.Writer, msg string, code int, errs []matrix.FieldError) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(jsonError{Error: strings.TrimSpace(msg), ExitCode: code, Errors: errs})
}

// fieldErrors are the problems of a matrix that does not validate, when
// err is one; nil otherwise.
func fieldErrors(err error) []matrix.FieldError {
	var ve *matrix.ValidationError
	if errors.As(err, &ve) {
		return ve.Errors
	}
	return nil
}

// AddMatrixFlags gives cmd, a command that reads the matrix, -f/--file
// (with usage saying what the file is to cmd; "" for "the matrix file"),
// its older hidden name --matrix, and --allow. Only such commands have
// them: a command that reads no matrix refuses -f as an unknown flag.
func AddMatrixFlags(cmd *cobra.Command, usage string) {
	if usage == "" {
		usage = "the matrix file"
	}
	fl := cmd.Flags()
	fl.StringP(MatrixFlag, "f", matrix.DefaultFile, usage)
	fl.String(matrixFlagOld, matrix.DefaultFile, usage+" (older name of --file)")
	_ = fl.MarkHidden(matrixFlagOld)
	fl.StringArray(AllowFlag, nil,
		"let the matrix read outside its repository, as 'docker buildx bake --allow': fs.read=PATH or fs=PATH (repeatable)")
}

// MatrixPath returns the matrix file named by -f/--file (or --matrix).
func MatrixPath(cmd *cobra.Command) string {
	name := MatrixFlag
	if fl := cmd.Flags().Lookup(matrixFlagOld); fl != nil && fl.Changed {
		name = matrixFlagOld
	}
	p, err := cmd.Flags().GetString(name)
	if err != nil || p == "" {
		return matrix.DefaultFile
	}
	return p
}

// LoadMatrix loads the matrix file named by -f/--file, with the folders
// --allow grants; its fixes name those flags.
func LoadMatrix(cmd *cobra.Command) (*matrix.Matrix, error) {
	allowed, err := allowedReads(cmd)
	if err != nil {
		return nil, err
	}
	return matrix.Load(MatrixPath(cmd), matrix.WithAllowRead(allowed...),
		matrix.WithMissingHint("run 'jetbake init' to write one, or name yours with -f/--file"),
		matrix.WithGrantReadFix(func(p string) string {
			return "grant read access with --allow fs.read=" + p + " (as 'docker buildx bake --allow')"
		}))
}

// allowedReads reads --allow: fs.read=PATH and fs=PATH (read and write,
// as in bake; jetbake writes only inside the repository) grant PATH.
func allowedReads(cmd *cobra.Command) ([]string, error) {
	values, err := cmd.Flags().GetStringArray(AllowFlag)
	if err != nil {
		return nil, nil
	}
	var paths []string
	for _, v := range values {
		key, p, ok := strings.Cut(v, "=")
		if !ok || (key != "fs.read" && key != "fs") || p == "" {
			return nil, usageErrorf("--allow %s: jetbake grants only file system reads: write --allow fs.read=PATH (or fs=PATH), as 'docker buildx bake --allow' does",
				computecap.QuoteShort(v))
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// DefaultRegistryTimeout is how long the registry calls of one command
// (pick, lock, the evidence lookups) may take in all by default.
const DefaultRegistryTimeout = 2 * time.Minute

// addTimeoutFlag adds --timeout to cmd and returns a function that gives
// the command's context with that deadline: a registry that never answers
// must not hold a pipeline for ever.
func addTimeoutFlag(cmd *cobra.Command) func(parent context.Context) (context.Context, context.CancelFunc, error) {
	var d time.Duration
	cmd.Flags().DurationVar(&d, "timeout", DefaultRegistryTimeout, "how long the registry may take to answer, in all, such as 30s or 5m")
	return func(parent context.Context) (context.Context, context.CancelFunc, error) {
		if d <= 0 {
			return nil, nil, usageErrorf("--timeout %s: give a time above zero, such as 30s or 5m", d)
		}
		if parent == nil {
			parent = context.Background()
		}
		ctx, cancel := context.WithTimeout(parent, d)
		return ctx, cancel, nil
	}
}

// registryContext is the command's context with the --timeout deadline,
// once the Docker config the registry calls read has been checked.
func registryContext(parent context.Context, deadline func(context.Context) (context.Context, context.CancelFunc, error)) (context.Context, context.CancelFunc, error) {
	if err := checkDockerConfig(); err != nil {
		return nil, nil, err
	}
	return deadline(parent)
}

// format is an --format value.
type format string

// Output formats.
const (
	formatText     format = "text"
	formatJSON     format = "json"
	formatMarkdown format = "markdown"
	formatGitHub   format = "github"
)

// addFormatFlag adds --format to cmd and returns a function that reads it.
// allowed lists the formats the command writes, its default first; none
// means text (the default) and json.
func addFormatFlag(cmd *cobra.Command, allowed ...format) func() (format, error) {
	if len(allowed) == 0 {
		allowed = []format{formatText, formatJSON}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	var value string
	cmd.Flags().StringVar(&value, "format", names[0], "output format: "+strings.Join(names, ", "))
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp))
	return func() (format, error) {
		if i := slices.Index(names, value); i >= 0 {
			return allowed[i], nil
		}
		return "", usageErrorf("--format %q is not known: use %s", value, strings.Join(names, ", "))
	}
}
