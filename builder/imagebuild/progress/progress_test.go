package progress

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Retry and failure lines show in every progress mode but quiet: auto
// on a non-terminal (a CI log) is plain.
func TestProgressLogLinesInEveryModeButQuiet(t *testing.T) {
	for _, mode := range []string{"auto", "plain", "rawjson", "quiet"} {
		t.Run(mode, func(t *testing.T) {
			var out bytes.Buffer
			p, err := New(t.Context(), mode, &out, nil)
			require.NoError(t, err)
			p.Logf("[%s] node %s failed (%s); retrying on another node", "jetpack6.2", "orin-1", "connection refused")
			p.Close()
			line := "[jetpack6.2] node orin-1 failed (connection refused); retrying on another node"
			if mode == "quiet" {
				require.Empty(t, out.String())
				return
			}
			require.Contains(t, out.String(), line)
			if mode == "rawjson" {
				for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
					require.True(t, strings.HasPrefix(l, "{"), "rawjson stays JSON: %q", l)
				}
			}
		})
	}
	_, err := New(t.Context(), "tty", &bytes.Buffer{}, nil)
	var pe *Error
	require.ErrorAs(t, err, &pe, "tty needs a terminal")
	require.Equal(t, "tty", pe.Mode)
}
