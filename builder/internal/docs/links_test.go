package docs

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const root = "../../.."

// repositoryDocs are the Markdown files a reader follows links through:
// the top-level ones and every page under docs/.
func repositoryDocs(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", "SECURITY.md", "CHANGELOG.md"}
	pages := 0
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
			pages++
		}
		return nil
	})
	require.NoError(t, err)
	require.NotZero(t, pages, "docs/ has no Markdown pages")
	return files
}

// Every relative link of the repository's docs names a file of the
// repository and, after '#', a heading of it.
func TestRepositoryLinks(t *testing.T) {
	files := repositoryDocs(t)
	broken, err := Check(root, files)
	require.NoError(t, err)
	var msgs []string
	for _, b := range broken {
		msgs = append(msgs, b.String())
	}
	require.Zero(t, len(msgs), "broken links:\n%s", strings.Join(msgs, "\n"))

	// The check saw the links it must: the README's index of docs/ and
	// links with anchors between the pages.
	var n, anchored int
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		for _, l := range Links(f, data) {
			n++
			if strings.Contains(l.Dest, "#") {
				anchored++
			}
		}
	}
	require.Greater(t, n, 20, "relative links found")
	require.Greater(t, anchored, 5, "relative links with an anchor found")
	t.Logf("%d relative links in %d files, %d with an anchor, all resolve", n, len(files), anchored)
}

// Slug gives the anchors github.com gives these headings.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"The router's settings":                            "the-routers-settings",
		"NVIDIA's container runtime in the tests":          "nvidias-container-runtime-in-the-tests",
		"Reproducible, annotated images":                   "reproducible-annotated-images",
		"Stand-ins model the real part, failures included": "stand-ins-model-the-real-part-failures-included",
		"[0.3.0] - 2026-01-02":                             "030---2026-01-02",
		"--set and --build-arg":                            "--set-and---build-arg",
		"snake_case and CamelCase":                         "snake_case-and-camelcase",
		"What (and why?)":                                  "what-and-why",
		"Über Jetson: SM 8.7":                              "über-jetson-sm-87",
		"  padded  ":                                       "padded",
	} {
		require.Equal(t, want, Slug(heading), "heading %q", heading)
	}
}

// A heading's anchor comes from its rendered text (code spans, emphasis
// and link text in, markup out); a repeated heading gets -1, -2.
func TestAnchors(t *testing.T) {
	src := "# The `jetbake build` *flags*\n\n## Notes\n\ntext\n\n## Notes\n\n### [Linked](x.md) heading\n\nSetext\n======\n\n```\n# not a heading\n```\n"
	got := Anchors([]byte(src))
	require.Equal(t, map[string]bool{
		"the-jetbake-build-flags": true, "notes": true, "notes-1": true, "linked-heading": true, "setext": true,
	}, got)
}

// Links finds the links GitHub renders, on their lines, and leaves out
// external ones and text that only looks like a link.
func TestLinks(t *testing.T) {
	src := strings.Join([]string{
		"# Title",                              // 1
		"",                                     // 2
		"See [the matrix](docs/matrix.md) and", // 3
		"[a page](https://example.com/x.md).",  // 4
		"",                                     // 5
		"| a | b |",                            // 6
		"|---|---|",                            // 7
		"| [cell](docs/a.md#x) | `[code](no.md)` |", // 8
		"",                // 9
		"```",             // 10
		"[fenced](no.md)", // 11
		"```",             // 12
		"",                // 13
		"![logo](img/logo.png) [ref][r] [self](#title) <mailto:x@example.com>", // 14
		"",                                       // 15
		"[r]: CONTRIBUTING.md#running-the-tests", // 16
	}, "\n")
	got := Links("README.md", []byte(src))
	require.Equal(t, []Link{
		{File: "README.md", Line: 3, Dest: "docs/matrix.md"},
		{File: "README.md", Line: 8, Dest: "docs/a.md#x"},
		{File: "README.md", Line: 14, Dest: "img/logo.png"},
		{File: "README.md", Line: 14, Dest: "CONTRIBUTING.md#running-the-tests"},
		{File: "README.md", Line: 14, Dest: "#title"},
	}, got)
}

// Check names the file, the line, the link and what is missing, for each
// way a link can break.
func TestCheckReportsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("docs/matrix.md", "# The matrix\n\n## Adding an SM target\n")
	write("tool.go", "package tool\n")
	write("README.md", strings.Join([]string{
		"# jetbake",
		"",
		"[ok](docs/matrix.md#adding-an-sm-target) [ok too](#jetbake) [folder](docs/) [code](tool.go)",
		"[gone](docs/speed.md)",
		"[no heading](docs/matrix.md#the-routers-settings)",
		"[no heading here](#install)",
		"[out](../elsewhere/README.md) [absolute](/docs/matrix.md)",
		"[line](tool.go#L1) [folder anchor](docs/#x)",
	}, "\n"))
	write("docs/evidence.md", "# Evidence\n\nBack to [the README](../README.md#jetbake) and [matrix](matrix.md#adding-an-sm).\n")

	broken, err := Check(dir, []string{"README.md", "docs/evidence.md"})
	require.NoError(t, err)
	var got []string
	for _, b := range broken {
		got = append(got, b.String())
	}
	require.Equal(t, []string{
		`README.md:4: link "docs/speed.md": docs/speed.md does not exist`,
		`README.md:5: link "docs/matrix.md#the-routers-settings": docs/matrix.md has no heading whose anchor is "the-routers-settings" (its anchors: adding-an-sm-target, the-matrix)`,
		`README.md:6: link "#install": README.md has no heading whose anchor is "install" (its anchors: jetbake)`,
		`README.md:7: link "../elsewhere/README.md": leads outside the repository`,
		`README.md:7: link "/docs/matrix.md": is an absolute path, which a checkout and GitHub read differently: write it relative to README.md`,
		`README.md:8: link "tool.go#L1": has an anchor, but tool.go is not a Markdown file whose headings could be checked: link the file alone`,
		`README.md:8: link "docs/#x": has an anchor, but docs is not a Markdown file whose headings could be checked: link the file alone`,
		`docs/evidence.md:3: link "matrix.md#adding-an-sm": docs/matrix.md has no heading whose anchor is "adding-an-sm" (its anchors: adding-an-sm-target, the-matrix)`,
	}, got)
}

// docsReference is a page of docs/ named in code, a script or a workflow,
// with its anchor: the text a help text or an error message points at.
var docsReference = regexp.MustCompile(`(?:^|[^/\w.])(docs/[\w-]+\.md(?:#[\w-]+)?)`)

// The pages and headings of docs/ that jetbake's code, scripts and
// workflows name exist. Tests are left out: their fixtures name pages of
// their own.
func TestCodeReferencesToDocs(t *testing.T) {
	var refs []Link
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") && name != ".github" || name == "bin" || name == "dist" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(name)
		if strings.HasSuffix(name, "_test.go") || (ext != ".go" && ext != ".sh" && ext != ".yml" && ext != ".yaml" && name != "Makefile") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		for _, m := range docsReference.FindAllSubmatchIndex(data, -1) {
			line := bytes.Count(data[:m[2]], []byte("\n")) + 1
			refs = append(refs, Link{File: filepath.ToSlash(rel), Line: line, Dest: string(data[m[2]:m[3]])})
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, refs, "no code names a page of docs/")
	var msgs []string
	for _, ref := range refs {
		reason, err := CheckReference(root, ref)
		require.NoError(t, err)
		if reason != "" {
			msgs = append(msgs, Broken{Link: ref, Reason: reason}.String())
		}
	}
	require.Zero(t, len(msgs), "code names pages or headings of docs/ that do not exist:\n%s", strings.Join(msgs, "\n"))
	t.Logf("%d references to docs/ in code, scripts and workflows, all resolve", len(refs))
}
