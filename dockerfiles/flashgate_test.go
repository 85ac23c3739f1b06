package dockerfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The script adds one exact term for Thor to TEI's flash-attention v2
// gate, on the layouts of v1.8.x (one line) and v1.9.x to main (a term a
// line), and nothing else; a second run changes nothing. (The stand-in
// cargo's reader of the gate checks in its own tests that the edited gate
// accepts exactly the caps it did and 110.)
func TestScriptOpensTheFlashGateForExactlyTheSM(t *testing.T) {
	for _, shell := range shells {
		for _, fixture := range []string{"upstream", "oneline"} {
			t.Run(shell+"/"+fixture, func(t *testing.T) {
				src := copyFixture(t, fixture)
				before, err := os.ReadFile(filepath.Join(src, flashFile))
				require.NoError(t, err)
				require.NotContains(t, string(before), "== 110", "upstream's gate refuses Thor")
				out, code := runScript(t, shell, src, "87", "110")
				require.Equal(t, 0, code, out)
				require.Contains(t, out, "flash-attention v2 now runs on SM 110 in")
				after, err := os.ReadFile(filepath.Join(src, flashFile))
				require.NoError(t, err)
				require.Equal(t, string(before), strings.ReplaceAll(strings.ReplaceAll(string(after),
					"        || runtime_compute_cap == 110 // Jetson, added by jetson-compute-cap.sh\n", ""),
					" || runtime_compute_cap == 110 { // Jetson, added by jetson-compute-cap.sh", " {"), "only the term for 110 is added (87 is in 80..90)")
				require.Equal(t, strings.Count(string(before), "\n")+map[string]int{"upstream": 1, "oneline": 0}[fixture],
					strings.Count(string(after), "\n"), "one term added, on its own line only where the gate has a term a line")
				require.Equal(t, 1, strings.Count(string(after), "runtime_compute_cap == 110"))

				out, code = runScript(t, shell, src, "87", "110")
				require.Equal(t, 0, code, out)
				require.Contains(t, out, "already runs flash-attention v2 on SM 87 110")
				again, err := os.ReadFile(filepath.Join(src, flashFile))
				require.NoError(t, err)
				require.Equal(t, string(after), string(again))
			})
		}
	}
}

// A flash_attn.rs the script cannot read fails in one sentence naming the
// file and the fix, and neither file is changed.
func TestScriptRefusesAnUnknownFlashGate(t *testing.T) {
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			src := copyFixture(t, "unknowngate")
			cc, err := os.ReadFile(filepath.Join(src, rsFile))
			require.NoError(t, err)
			out, code := runScript(t, shell, src, "110")
			require.Equal(t, 1, code, out)
			require.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "one line: %s", out)
			for _, w := range []string{"SM 110", flashFile, `"runtime_compute_cap >= 80"`, "pin a router version"} {
				require.Contains(t, out, w)
			}
			after, err := os.ReadFile(filepath.Join(src, rsFile))
			require.NoError(t, err)
			require.Equal(t, string(cc), string(after), "compute_cap.rs is not edited either")

			src = copyFixture(t, "nofunction")
			out, code = runScript(t, shell, src, "110")
			require.Equal(t, 1, code, out)
		})
	}
	t.Run("no flash_attn.rs", func(t *testing.T) {
		src := copyFixture(t, "upstream")
		require.NoError(t, os.Remove(filepath.Join(src, flashFile)))
		out, code := runScript(t, "sh", src, "110")
		require.Equal(t, 1, code, out)
		require.Contains(t, out, flashFile+": the file does not exist")
		out, code = runScript(t, "sh", src, "72")
		require.Equal(t, 0, code, "Xavier needs no flash gate: %s", out)
	})
}
