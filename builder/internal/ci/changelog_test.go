package ci

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/semver"
)

// CHANGELOG.md has Keep a Changelog's form: the title, an Unreleased
// section first, then one section per release, newest first, as
// "## [X.Y.Z] - YYYY-MM-DD", each heading with its link.
func TestChangelog(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	require.NoError(t, err)
	checkChangelog(t, string(data))
}

var (
	sectionRE = regexp.MustCompile(`^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$`)
	kindRE    = regexp.MustCompile(`^### (Added|Changed|Deprecated|Removed|Fixed|Security)$`)
)

func checkChangelog(t *testing.T, text string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	require.Equal(t, "# Changelog", lines[0])
	var versions []string
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "## "):
			m := sectionRE.FindStringSubmatch(line)
			require.NotNil(t, m, "line %d: a section is ## [X.Y.Z] - YYYY-MM-DD or ## [Unreleased]: %q", i+1, line)
			if len(versions) == 0 {
				require.Equal(t, "Unreleased", m[1], "line %d: the first section is [Unreleased]", i+1)
				require.Empty(t, m[2], "line %d", i+1)
			} else {
				require.True(t, semver.IsValid("v"+m[1]) && semver.Canonical("v"+m[1]) == "v"+m[1], "line %d: %s is not X.Y.Z", i+1, m[1])
				_, err := time.Parse(time.DateOnly, m[2])
				require.NoError(t, err, "line %d: a release section has its date", i+1)
				if prev := versions[len(versions)-1]; prev != "Unreleased" {
					require.Equal(t, 1, semver.Compare("v"+prev, "v"+m[1]), "line %d: the newest release comes first", i+1)
				}
			}
			versions = append(versions, m[1])
		case strings.HasPrefix(line, "### "):
			require.Regexp(t, kindRE, line, "line %d: Keep a Changelog's kinds of change", i+1)
		}
	}
	require.NotEmpty(t, versions, "CHANGELOG.md has an [Unreleased] section")
	for _, v := range versions {
		require.Contains(t, text, "\n["+v+"]: https://github.com/jetbake/jetbake/", "the heading [%s] has its link", v)
	}
}

// The release workflow's notes step prints the tag's CHANGELOG section and
// refuses a tag without one; run here as GitHub runs a step (bash -eo pipefail).
func TestReleaseNotes(t *testing.T) {
	script := readWorkflow(t, "release.yml").stepNamed(t, "release", "Release notes from CHANGELOG.md").Run
	changelog := strings.Join([]string{
		"# Changelog", "", "## [Unreleased]", "", "### Added", "", "- next", "",
		"## [0.2.0] - 2026-12-20", "", "### Fixed", "", "- the second", "",
		"## [0.1.0] - 2026-12-01", "", "### Added", "", "- the first", "",
		"[Unreleased]: https://github.com/jetbake/jetbake/compare/v0.2.0...HEAD",
		"[0.2.0]: https://github.com/jetbake/jetbake/compare/v0.1.0...v0.2.0",
		"[0.1.0]: https://github.com/jetbake/jetbake/releases/tag/v0.1.0", "",
	}, "\n")
	checkChangelog(t, changelog)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte(changelog), 0o644))
	notes := func(tag string) (string, string, error) {
		tmp := t.TempDir()
		cmd := exec.CommandContext(t.Context(), "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TAG="+tag, "RUNNER_TEMP="+tmp)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		data, _ := os.ReadFile(filepath.Join(tmp, "notes.md"))
		return string(data), out.String(), err
	}
	got, out, err := notes("v0.2.0")
	require.NoError(t, err, out)
	require.Equal(t, "\n### Fixed\n\n- the second\n\n", got)
	got, out, err = notes("v0.1.0")
	require.NoError(t, err, out)
	require.Equal(t, "\n### Added\n\n- the first\n\n", got, "the link definitions are not notes")
	_, out, err = notes("v0.3.0")
	require.Error(t, err)
	require.Contains(t, out, "::error file=CHANGELOG.md::CHANGELOG.md has no section '## [0.3.0] - YYYY-MM-DD' for the tag v0.3.0")
	_, out, err = notes("v0.1")
	require.Error(t, err, "a prefix of a version is not its section")
	require.Contains(t, out, "has no section '## [0.1] - YYYY-MM-DD'")
}
