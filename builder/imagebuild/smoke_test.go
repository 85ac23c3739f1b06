package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Where each DT_NEEDED entry resolved, from the loader's trace; the
// driver is the host's.
func TestResolvedLibraries(t *testing.T) {
	trace := "\tlinux-vdso.so.1 (0x0000)\n\tlibcuda.so.1 => /jetbake-smoke-driver/libcuda.so.1 (0x1)\n" +
		"\tlibcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12 (0x2)\n\tlibssl.so.3 => not found\n\tlibc.so.6 => /lib/aarch64-linux-gnu/libc.so.6 (0x3)\n"
	require.Equal(t, []Library{{Name: "libcuda.so.1", FromHost: true}, {Name: "libcudart.so.12", Path: "/usr/local/cuda/lib64/libcudart.so.12"},
		{Name: "libssl.so.3"}, {Name: "libc.so.6", Path: "/lib/aarch64-linux-gnu/libc.so.6"}},
		resolvedLibraries([]string{"libcuda.so.1", "libcudart.so.12", "libssl.so.3", "libc.so.6"}, trace))
}

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
