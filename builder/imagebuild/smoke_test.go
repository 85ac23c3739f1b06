package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A release's smoke run checks every folder its layers create, the
// entrypoint's and image.json's too, and runs each target's binary.
func TestSmokeSpec(t *testing.T) {
	p := testPlan()
	j := &releaseJob{opts: &options{}, plan: p, release: p.Releases[1]}
	s := j.smokeSpec()
	require.Equal(t, []string{"/etc", "/etc/jetbake", "/usr", "/usr/local", "/usr/local/bin"}, s.LayerDirs())
	require.Equal(t, []string{"/usr/local/bin/router-87", "/usr/local/bin/router-110"}, s.Paths)
	require.Equal(t, []string{"--version"}, s.Args)
	require.Equal(t, "13.2", s.CUDA)
}

// Without a shared session the smoke run is solved inline: the build gets
// nothing to hand it to.
func TestHandSmokeInline(t *testing.T) {
	require.Nil(t, (&releaseJob{opts: &options{}}).handSmoke(nil))
}
