package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
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
	require.Equal(t, smoke.BuildBaseStub(p.Releases[1].BuildBase), s.Stub)
	// On the cross path the stub is the cross build base's, which the routers link.
	j.crossBase, j.release.CUDATargetDir, j.path = "127.0.0.1:5000/cross:13.2", "sbsa-linux", emulation.Choice{Path: emulation.PathCross}
	require.Equal(t, []string{"/usr/local/cuda/targets/sbsa-linux/lib/stubs/libcuda.so"}, j.smokeSpec().Stub.Paths)
	require.Equal(t, "the cross build base 127.0.0.1:5000/cross:13.2", j.smokeSpec().Stub.Base)
}

// Without a shared session the smoke run is solved inline: the build gets
// nothing to hand it to.
func TestHandSmokeInline(t *testing.T) {
	require.Nil(t, (&releaseJob{opts: &options{}}).handSmoke(nil))
}
