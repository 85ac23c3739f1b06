package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmokeResultNamesTheMissingLibrary(t *testing.T) {
	p := testPlan()
	j := &releaseJob{plan: p, release: p.Releases[0]}
	require.NoError(t, j.smokeResult("router-87", "0", "text-embeddings-router 1.8.0"))
	err := j.smokeResult("router-87", "127",
		"/usr/local/bin/router-87: error while loading shared libraries: libssl.so.3: cannot open shared object file: No such file or directory\n")
	require.ErrorContains(t, err, "router-87 --version (exit 127) fails on the runtime base: it needs libssl.so.3, which the runtime base "+p.Releases[0].RuntimeBase+" lacks")
	err = j.smokeResult("router-87", "1", "starting\nError: something else\n")
	require.ErrorContains(t, err, "router-87 --version (exit 1) fails on the runtime base: Error: something else")
}
