package imagebuild

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The smoke run's result file decides the verdict: every library each
// binary needs, named at once; every binary must have run and exited 0; no
// folder jetbake's layers create may be a link in the image; the image must
// have a CA bundle.
// The script lists each binary's libraries with its own loader, with the
// driver stub first on the library path, then runs it, and checks every
// folder the layers create, parents included.
// readELF reads DT_NEEDED and PT_INTERP of a real aarch64 program through
// the block reader, as the smoke run reads a router through the gateway.
func TestReadELF(t *testing.T) {
	cc, err := exec.LookPath("aarch64-linux-gnu-gcc")
	require.NoError(t, err, "run 'make deps': it installs Debian's aarch64 cross compiler")
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	require.NoError(t, os.WriteFile(src, []byte("#include <math.h>\nint main(int c, char **v) { return (int)sqrt(c); }\n"), 0o644))
	bin := filepath.Join(dir, "m")
	out, err := exec.Command(cc, "-o", bin, src, "-Wl,--no-as-needed", "-lm").CombinedOutput()
	require.NoError(t, err, string(out))
	data, err := os.ReadFile(bin)
	require.NoError(t, err)
	reads := 0
	r := &blockReader{size: int64(len(data)), blocks: map[int64][]byte{}, read: func(off int64, n int) ([]byte, error) {
		reads++
		return data[off : off+int64(n)], nil
	}}
	needed, interp, err := readELF(r)
	require.NoError(t, err)
	require.Equal(t, []string{"libm.so.6", "libc.so.6"}, needed)
	require.Equal(t, "/lib/ld-linux-aarch64.so.1", interp)
	require.LessOrEqual(t, reads, 3, "a few blocks, each read once")

	_, _, err = readELF(bytes.NewReader([]byte("#!/bin/sh\necho router\n")))
	var fe *elf.FormatError
	require.ErrorAs(t, err, &fe)
	require.True(t, strings.Contains(err.Error(), "bad magic number"))
}

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
	j := &releaseJob{plan: p, release: p.Releases[1]}
	s := j.smokeSpec()
	require.Equal(t, []string{"/etc", "/etc/jetbake", "/usr", "/usr/local", "/usr/local/bin"}, s.LayerDirs())
	require.Equal(t, []string{"/usr/local/bin/router-87", "/usr/local/bin/router-110"}, s.Paths)
	require.Equal(t, []string{"--version"}, s.Args)
	require.Equal(t, "13.2", s.CUDA)
}

// Without a shared session the smoke run is solved inline: the build gets
// nothing to hand it to.
func TestHandSmokeInline(t *testing.T) {
	require.Nil(t, (&releaseJob{}).handSmoke(nil))
}
