package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// matrixCommands are the commands that read a matrix, each with the
// arguments that reach the reading and what it then says of a matrix file
// that is not there (%s: the file). Only these have -f/--file and --allow
// (docs/pipelines.md#one-rule-for-every-command); a new command that
// reads a matrix is added here.
var matrixCommands = map[string]struct {
	args []string
	want string
}{
	"jetbake validate":     {nil, "matrix file %s does not exist"},
	"jetbake plan":         {nil, "matrix file %s does not exist"},
	"jetbake compat":       {[]string{"8.7"}, "matrix file %s does not exist"},
	"jetbake build":        {nil, "matrix file %s does not exist"},
	"jetbake check":        {nil, "matrix file %s does not exist"},
	"jetbake lock":         {nil, "matrix file %s does not exist"},
	"jetbake support":      {[]string{"--registry=false"}, "matrix file %s does not exist"},
	"jetbake evidence add": {[]string{"evidence.json", "--registry=false"}, "matrix file %s does not exist"},
	"jetbake init":         {nil, "cannot write %s: the folder"}, // the matrix it writes
	"jetbake fleet":        {[]string{"--metadata-file", "build.json"}, "matrix file %s does not exist"},
}

// goText is text of Go's libraries that no error of jetbake shows a user.
var goText = []string{"strconv.", "time: ", `invalid argument "`, "ParseInt", "ParseBool", "ParseDuration",
	"time.Duration", "int32", "int64", "stringSlice", "stringArray", "[]string", "%!", "pflag", "*errors."}

// everyCommand walks the whole command tree of jetbake, the commands cobra
// adds (help, completion) included, and returns each with its path.
func everyCommand(t *testing.T) map[string]*cobra.Command {
	t.Helper()
	root := NewRootCommand()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	out := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		out[c.CommandPath()] = c
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	require.Greater(t, len(out), len(builtinCommands()), "the walk reaches every command")
	return out
}

// requireOneSentence checks that r is bad usage told in one line of
// jetbake's own words.
func requireOneSentence(t *testing.T, r result, what string) {
	t.Helper()
	require.Equal(t, ExitUsage, r.code, "%s: %s", what, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "%s: one line: %q", what, r.stderr)
	require.True(t, strings.HasSuffix(r.stderr, "\n"), what)
	for _, g := range goText {
		require.NotContains(t, r.stderr, g, "%s: Go's words in %q", what, r.stderr)
	}
}

// TestEveryCommandKeepsTheRule holds the rule of
// docs/pipelines.md#one-rule-for-every-command over every command
// there is, so that a new command cannot skip it: --help; -f/--file and
// --allow on the commands that read a matrix and on no other; a flag's
// value that does not parse, or a missing one, is exit status 2 and one
// line without Go's words.
func TestEveryCommandKeepsTheRule(t *testing.T) {
	commands := everyCommand(t)
	var seen []string
	for path, c := range commands {
		args := strings.Fields(path)[1:]
		t.Run(path, func(t *testing.T) {
			require.NotEmpty(t, c.Short, "a one-line description")
			r := run(t, append(slices.Clone(args), "--help")...)
			require.Equal(t, ExitOK, r.code, r.stderr)
			require.Contains(t, r.stdout, "Usage:")

			mc, reads := matrixCommands[path]
			for _, name := range []string{MatrixFlag, AllowFlag, matrixFlagOld} {
				require.Equal(t, reads, c.Flags().Lookup(name) != nil, "--%s is a flag of the commands that read a matrix, and of no other", name)
			}
			missing := filepath.Join(t.TempDir(), "nodir", "matrix.json")
			if reads {
				seen = append(seen, path)
				r = run(t, append(append(slices.Clone(args), mc.args...), "-f", missing)...)
				requireOneSentence(t, r, "-f of a missing file")
				require.Contains(t, r.stderr, strings.ReplaceAll(mc.want, "%s", missing), "-f names the file the command reads")
			} else {
				for _, flag := range [][]string{{"-f", missing}, {"--file", missing}, {"--allow", "fs.read=/"}} {
					r = run(t, append(slices.Clone(args), flag...)...)
					requireOneSentence(t, r, flag[0])
					require.Equal(t, path+" reads no matrix: -f/--file and --allow are not its flags; run '"+path+" --help'\n", r.stderr)
				}
			}

			c.Flags().VisitAll(func(fl *pflag.Flag) {
				bad, ok := badValues[fl.Value.Type()]
				if !ok {
					require.Contains(t, []string{"string", "stringArray"}, fl.Value.Type(),
						"--%s: a flag of a new type gets a bad value in badValues", fl.Name)
					return // the command's own code reads it, in its own words
				}
				r := run(t, append(slices.Clone(args), "--"+fl.Name+"="+bad)...)
				requireOneSentence(t, r, "--"+fl.Name+"="+bad)
				require.True(t, strings.HasPrefix(r.stderr, "--"+fl.Name+" "), "names the flag first: %q", r.stderr)
				require.Contains(t, r.stderr, computecap.QuoteShort(bad), "names the value")
				if fl.NoOptDefVal == "" {
					r = run(t, append(slices.Clone(args), "--"+fl.Name)...)
					requireOneSentence(t, r, "--"+fl.Name+" without a value")
					require.Contains(t, r.stderr, "--"+fl.Name+" needs a value")
				}
			})
		})
	}
	slices.Sort(seen)
	want := make([]string, 0, len(matrixCommands))
	for path := range matrixCommands {
		want = append(want, path)
	}
	slices.Sort(want)
	require.Equal(t, want, seen, "every command of matrixCommands exists")
}

// badValues are values that each type of flag pflag parses refuses.
var badValues = map[string]string{
	"bool": "maybe", "duration": "5", "int": "x", "int32": "x", "int64": "x", "uint": "x", "uint32": "x",
	"stringSlice": `"a`,
}

// The sentences of the flags the rule is about, word for word.
func TestFlagValueSentences(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"pick", "--timeout", "5"}, `--timeout "5": a duration needs a unit, e.g. 5s or 2m; run 'jetbake pick --help'`},
		{[]string{"audit", "--timeout=2x", "x"}, `--timeout "2x": not a duration: write a number and a unit (ms, s, m, h), e.g. 30s or 5m; run 'jetbake audit --help'`},
		{[]string{"doctor", "--every", "10"}, `--every "10": a duration needs a unit, e.g. 10s or 2m; run 'jetbake doctor --help'`},
		{[]string{"build", "--parallel", "many"}, `--parallel "many": give a whole number, e.g. 4; run 'jetbake build --help'`},
		{[]string{"fleet", "--replicas", "99999999999"}, `--replicas "99999999999": the number is too large; run 'jetbake fleet --help'`},
		{[]string{"build", "--push=maybe"}, `--push "maybe": give true or false, or the flag alone for true; run 'jetbake build --help'`},
		{[]string{"lock", "--timeout"}, `--timeout needs a value; run 'jetbake lock --help'`},
		{[]string{"plan", "--release", `"a`}, `--release "\"a": give values separated by commas, a value with a comma in double quotes; run 'jetbake plan --help'`},
		{[]string{"doctor", "-f", "empty.json"}, `jetbake doctor reads no matrix: -f/--file and --allow are not its flags; run 'jetbake doctor --help'`},
		{[]string{"pick", "x", "--allow", "fs=/"}, `jetbake pick reads no matrix: -f/--file and --allow are not its flags; run 'jetbake pick --help'`},
	} {
		r := run(t, tt.args...)
		require.Equal(t, ExitUsage, r.code, "%v", tt.args)
		require.Equal(t, tt.want+"\n", r.stderr, "%v", tt.args)
	}
}
