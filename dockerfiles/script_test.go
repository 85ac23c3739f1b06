package dockerfiles

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	rsFile    = "backends/candle/src/compute_cap.rs"
	flashFile = "backends/candle/src/flash_attn.rs"
)

// shells are the interpreters the script must work under: POSIX sh (dash on
// Debian, busybox in the stand-in bases) and bash (Ubuntu build bases).
var shells = []string{"sh", "bash"}

// copyFixture copies testdata/NAME (its compute_cap.rs, else upstream's,
// and its flash_attn.rs when it has one) to a temporary source folder.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, filepath.Dir(rsFile)), 0o755))
	for _, f := range []string{rsFile, flashFile} {
		data, err := os.ReadFile(filepath.Join("testdata", name, f))
		if f == rsFile && os.IsNotExist(err) {
			data, err = os.ReadFile(filepath.Join("testdata", "upstream", f))
		}
		if f == flashFile && os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(src, f), data, 0o644))
	}
	return src
}

// runScript runs the embedded script (the bytes jetbake hands BuildKit) under shell.
func runScript(t *testing.T, shell string, args ...string) (string, int) {
	t.Helper()
	script := filepath.Join(t.TempDir(), ComputeCapScript)
	require.NoError(t, os.WriteFile(script, Files()[ComputeCapScript], 0o644))
	out, err := exec.Command(shell, append([]string{script}, args...)...).CombinedOutput()
	if exit, ok := err.(*exec.ExitError); ok {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err)
	return string(out), 0
}

// matchArms returns the arms of fn compute_cap_matching, trimmed.
func matchArms(t *testing.T, src string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(src, rsFile))
	require.NoError(t, err)
	_, body, ok := strings.Cut(string(data), "fn compute_cap_matching(")
	require.True(t, ok)
	body, _, _ = strings.Cut(body, "\n}\n")
	var arms []string
	for _, line := range strings.Split(body, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "(") {
			arm, _, _ := strings.Cut(line, "//")
			arm = strings.TrimSpace(arm)
			arms = append(arms, arm)
		}
	}
	return arms
}

func TestScriptAddsExactArmsBeforeTheCatchAll(t *testing.T) {
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			src := copyFixture(t, "upstream")
			before, err := os.ReadFile(filepath.Join(src, rsFile))
			require.NoError(t, err)
			out, code := runScript(t, shell, src, "87", "110")
			require.Equal(t, 0, code, out)
			require.Contains(t, out, "added the arms for SM 87 110")
			arms := matchArms(t, src)
			require.Equal(t, []string{
				"(75, 75) => true,", "(80..=89, 80) => true,", "(86..=89, 80..=86) => true,", "(89, 89) => true,",
				"(90, 90) => true,", "(100, 100) => true,", "(120..=121, 120) => true,", "(121, 121) => true,",
				"(87, 87) => true,", "(110, 110) => true,", "(_, _) => false,",
			}, arms, "only exact arms are added, last before the catch-all")
			after, err := os.ReadFile(filepath.Join(src, rsFile))
			require.NoError(t, err)
			require.Contains(t, string(after), "\n        (87, 87) => true,", "indented like the catch-all")
			// Nothing outside the function changes: the test module's catch-all stays alone.
			require.Equal(t, strings.Count(string(before), "=> false"), strings.Count(string(after), "=> false"))
			require.Equal(t, len(before)+2*len("        (87, 87) => true, // Jetson, added by jetson-compute-cap.sh\n")+2,
				len(after), "two lines added, nothing else")

			// Idempotent: a second run changes nothing.
			out, code = runScript(t, shell, src, "87", "110")
			require.Equal(t, 0, code, out)
			require.Contains(t, out, "already accepts SM 87 110 exactly")
			again, err := os.ReadFile(filepath.Join(src, rsFile))
			require.NoError(t, err)
			require.Equal(t, string(after), string(again))
		})
	}
}

func TestScriptLeavesPresentArmsAlone(t *testing.T) {
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			src := copyFixture(t, "patched")
			before, err := os.ReadFile(filepath.Join(src, rsFile))
			require.NoError(t, err)
			out, code := runScript(t, shell, src, "87", "110")
			require.Equal(t, 0, code, out)
			after, err := os.ReadFile(filepath.Join(src, rsFile))
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "(87, 87) and (110,110) are already there")

			// Xavier's arm is added; the others are not repeated. Xavier
			// has no flash-attention v2 (sm_80 and newer): its gate stays.
			flashBefore, err := os.ReadFile(filepath.Join(src, flashFile))
			require.NoError(t, err)
			out, code = runScript(t, shell, src, "87", "72")
			require.Equal(t, 0, code, out)
			require.Equal(t, []string{"(75, 75) => true,", "(80..=89, 80) => true,", "(87, 87) => true,",
				"(110,110) => true,", "(72, 72) => true,", "(_, _) => false,"}, matchArms(t, src))
			flashAfter, err := os.ReadFile(filepath.Join(src, flashFile))
			require.NoError(t, err)
			require.Equal(t, string(flashBefore), string(flashAfter))
		})
	}
}

func TestScriptFailsWithOneSentence(t *testing.T) {
	cases := []struct {
		name, fixture string
		args          []string
		code          int
		want          []string
	}{
		{"no function", "nofunction", []string{"87"}, 1,
			[]string{"SM 87", rsFile, "has no fn compute_cap_matching", "pin a router version"}},
		{"no file", "", []string{"110"}, 1, []string{"SM 110", rsFile, "does not exist", "pin a router version"}},
		{"SM not in digits", "upstream", []string{"8.7"}, 2, []string{`SM "8.7"`, "write it like 87"}},
		{"no SM", "upstream", nil, 2, []string{"usage:"}},
	}
	for _, shell := range shells {
		for _, c := range cases {
			t.Run(shell+"/"+c.name, func(t *testing.T) {
				src := t.TempDir()
				if c.fixture != "" {
					src = copyFixture(t, c.fixture)
				}
				out, code := runScript(t, shell, append([]string{src}, c.args...)...)
				require.Equal(t, c.code, code, out)
				require.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "one line: %s", out)
				for _, w := range c.want {
					require.Contains(t, out, w)
				}
			})
		}
	}
	t.Run("the file is left untouched", func(t *testing.T) {
		src := copyFixture(t, "nofunction")
		before, _ := os.ReadFile(filepath.Join(src, rsFile))
		_, code := runScript(t, "sh", src, "87")
		require.Equal(t, 1, code)
		after, _ := os.ReadFile(filepath.Join(src, rsFile))
		require.Equal(t, before, after)
		entries, _ := os.ReadDir(filepath.Dir(filepath.Join(src, rsFile)))
		require.Len(t, entries, 1, "no temporary file left behind")
	})
}

// The embedded script is the file in this folder: jetbake hands BuildKit
// the same bytes a person runs by hand.
func TestEmbeddedFilesAreTheCheckedInOnes(t *testing.T) {
	data, err := os.ReadFile(ComputeCapScript)
	require.NoError(t, err)
	require.Equal(t, data, Files()[ComputeCapScript])
	df, err := os.ReadFile("Dockerfile-jetson")
	require.NoError(t, err)
	require.Equal(t, df, DockerfileJetson())
}
