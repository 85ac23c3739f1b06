package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The shared session's key names the folders: the same folders give the
// same key on every run, other folders another.
func TestLocalsKey(t *testing.T) {
	j := &releaseJob{opts: &options{}, contextDir: "/src/tei", dockerfileDir: "/src/tei/dockerfiles"}
	same := &releaseJob{opts: &options{}, contextDir: "/src/tei", dockerfileDir: "/src/tei/dockerfiles"}
	other := &releaseJob{opts: &options{}, contextDir: "/src/other", dockerfileDir: "/src/tei/dockerfiles"}
	require.Equal(t, j.localsKey("/opt/jetbake"), same.localsKey("/opt/jetbake"))
	require.NotEqual(t, j.localsKey("/opt/jetbake"), other.localsKey("/opt/jetbake"))
	require.NotEqual(t, j.localsKey("/opt/jetbake"), j.localsKey("/opt/other"))
	require.Regexp(t, `^jetbake-[0-9a-f]{16}$`, j.localsKey("/opt/jetbake"))
}
