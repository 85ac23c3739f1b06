package bake

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/version"
)

// A released jetbake is its version and commit; a build of a modified
// checkout, or one of no known commit, is also its binary, so that two
// such builds never share a remembered verdict.
func TestToolIdentity(t *testing.T) {
	clean := version.Info{Version: "v0.4.0", Commit: "0123456789abcdef"}
	require.Equal(t, clean.String(), toolIdentity(clean))
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, dev := range []version.Info{{Version: "(devel)", Commit: "0123456789abcdef", Modified: true}, {Version: "(devel)"}} {
		id := toolIdentity(dev)
		require.True(t, strings.HasPrefix(id, dev.String()+" binary "+exe+" "), id)
		require.NotEqual(t, toolIdentity(clean), id)
	}
}
