package bake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/plan"
)

// A lock file written before jetbake pinned git contexts still serves the
// bases; the build says it pins no commit and takes what the ref names.
func TestGitPinOptionsOldLockFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, lock.DefaultFile), []byte(`{"schema_version": 1, "bases": {}}`), 0o644))
	var log strings.Builder
	logf := func(format string, args ...any) { fmt.Fprintf(&log, format+"\n", args...) }
	pinsOpts := lock.PinsOptions{MatrixPath: filepath.Join(dir, "matrix.json")}
	p := &plan.Plan{Router: plan.Router{Context: "https://git.example.com/acme/router.git#v1.0.0"}}
	lf, err := lock.Read(filepath.Join(dir, lock.DefaultFile))
	require.NoError(t, err)
	opts, err := gitPinOptions(context.Background(), p, lf, pinsOpts, Options{}, logf)
	require.NoError(t, err)
	require.Len(t, opts, 1, "the credentials only, no pin")
	require.Equal(t, "warning: "+filepath.Join(dir, lock.DefaultFile)+` pins no commit for router.context "https://git.example.com/acme/router.git#v1.0.0": `+
		"building what its ref names now; run 'jetbake lock' to pin it\n", log.String())

	log.Reset()
	opts, err = gitPinOptions(context.Background(), &plan.Plan{Router: plan.Router{Context: dir}}, lf, pinsOpts, Options{}, logf)
	require.NoError(t, err)
	require.Empty(t, opts, "a local router")
	require.Empty(t, log.String())
}
