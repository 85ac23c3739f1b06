package codemap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const root = "../../.."

// mapFile is the code map, relative to the repository's root.
const mapFile = "docs/code-map.md"

// TestCodeMap is the code map kept true: every package of the module has
// one row in the map, and imports only what its row allows.
func TestCodeMap(t *testing.T) {
	f, err := os.Open(filepath.Join(root, mapFile))
	require.NoError(t, err)
	defer f.Close()
	rules, err := Parse(f)
	require.NoError(t, err)
	pkgs, err := List(t.Context(), root)
	require.NoError(t, err)
	require.Greater(t, len(pkgs), 30, "go list found the module's packages")
	problems := Check(rules, pkgs, mapFile)
	require.Empty(t, problems, "the code map and the imports disagree:\n%s", strings.Join(problems, "\n"))
}

const sample = `# Code map

| package | its job | may import |
|---|---|---|
| ` + "`computecap`" + ` | rules | standard library only |
| ` + "`entrypoint`, `entrypoint/cudaprobe`" + ` | pick | ` + "`computecap`, `entrypoint/*spec` only" + ` |
| ` + "`entrypoint/*spec`" + ` | shapes | standard library only |
| ` + "`builder/refs`" + ` | refs | standard library and third parties |
| ` + "`builder/cli`" + ` | flags | all of the above |
| ` + "`builder/internal/...`" + ` | tests | anything |

After the table.
`

// TestCheck is the checker failing on what it is there to catch.
func TestCheck(t *testing.T) {
	rules, err := Parse(strings.NewReader(sample))
	require.NoError(t, err)
	require.Len(t, rules, 6)
	std := map[string]bool{"fmt": true, "os": true}
	pkg := func(path string, imports ...string) Package {
		return Package{ImportPath: path, Imports: imports, Std: std}
	}
	for _, tc := range []struct {
		name string
		pkg  Package
		want string
	}{
		{"allowed", pkg("entrypoint", "fmt", "computecap", "entrypoint/imagespec"), ""},
		{"a module import the row does not name", pkg("computecap", "fmt", "builder/refs"),
			"computecap imports builder/refs, which the row at line 5 of map.md does not allow"},
		{"a third party in a standard-library row", pkg("entrypoint/evidencespec", "github.com/x/y"),
			"entrypoint/evidencespec imports github.com/x/y, a third party, which the row at line 7 of map.md does not allow"},
		{"a third party in a list row", pkg("entrypoint/cudaprobe", "golang.org/x/sys/unix"),
			"a third party, which the row at line 6"},
		{"third parties allowed", pkg("builder/refs", "github.com/google/go-containerregistry/pkg/name"), ""},
		{"a module import in a third-party row", pkg("builder/refs", "computecap"), "builder/refs imports computecap"},
		{"all of the above", pkg("builder/cli", "builder/refs", "entrypoint", "github.com/spf13/cobra"), ""},
		{"not above", pkg("builder/cli", "builder/internal/demo"), "builder/cli imports builder/internal/demo"},
		{"anything", pkg("builder/internal/e2e", "builder/cli", "github.com/a/b"), ""},
		{"no row", pkg("builder/newthing", "fmt"), "builder/newthing: no row of map.md names the package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems := Check(rules, []Package{tc.pkg}, "map.md")
			if tc.want == "" {
				require.Empty(t, problems)
				return
			}
			require.Len(t, problems, 1)
			require.Contains(t, problems[0], tc.want)
		})
	}
}

// TestParseErrors is a code map the checker cannot read, in a sentence.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ page, want string }{
		{"# nothing\n", "no code map table"},
		{"| package | job | may import |\n|---|---|---|\n| `a` | b |\n", "line 3: a code map row has 3 cells"},
		{"| package | job | may import |\n|---|---|---|\n| a | b | c |\n", "line 3: the row names no package"},
		{"| package | job | may import |\n|---|---|---|\n| `a` | b | whatever |\n", `line 3: "whatever" allows nothing`},
	} {
		_, err := Parse(strings.NewReader(tc.page))
		require.ErrorContains(t, err, tc.want)
	}
}

// imagebuildLimit is how many lines builder/imagebuild's own files may
// hold (issue 34's limit, kept since issue 49).
const imagebuildLimit = 3200

// TestImagebuildSize keeps builder/imagebuild one job: its own files stay
// within the limit, and each other job is a package beside it.
func TestImagebuildSize(t *testing.T) {
	lines, err := OwnLines(filepath.Join(root, "builder/imagebuild"))
	require.NoError(t, err)
	require.Greater(t, lines, 1000, "the package's files were found")
	require.Empty(t, CheckSize("builder/imagebuild", lines, imagebuildLimit))
}

// TestCheckSize is the size check failing on a package over the limit,
// counting only its own non-test files.
func TestCheckSize(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.go"), []byte("package a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a_test.go"), []byte("package a\n\n\n\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "c.go"), []byte("package sub\n\n"), 0o644))
	lines, err := OwnLines(dir)
	require.NoError(t, err)
	require.Equal(t, 4, lines)
	require.Empty(t, CheckSize("builder/x", 4, 4))
	require.Equal(t, "builder/x's own non-test .go files hold 5 lines, more than 4: move a whole job into a package beside it "+
		"(under builder/x/, with a name that says its job) and give that package its row in docs/code-map.md", CheckSize("builder/x", 5, 4))
}
