package gatewayfile

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ReadELF reads DT_NEEDED and PT_INTERP of a real aarch64 program through
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
	r := &Reader{size: int64(len(data)), blocks: map[int64][]byte{}, read: func(off int64, n int) ([]byte, error) {
		reads++
		return data[off : off+int64(n)], nil
	}}
	needed, interp, err := ReadELF(r)
	require.NoError(t, err)
	require.Equal(t, []string{"libm.so.6", "libc.so.6"}, needed)
	require.Equal(t, "/lib/ld-linux-aarch64.so.1", interp)
	require.LessOrEqual(t, reads, 3, "a few blocks, each read once")

	_, _, err = ReadELF(bytes.NewReader([]byte("#!/bin/sh\necho router\n")))
	var fe *elf.FormatError
	require.ErrorAs(t, err, &fe)
	require.True(t, strings.Contains(err.Error(), "bad magic number"))
}

// Digest is the sha256 of the whole file, read in few large ranges, and
// a read that comes back short fails rather than digest a part.
func TestDigest(t *testing.T) {
	data := bytes.Repeat([]byte("router bytes "), 2<<20) // 26 MiB: 3 ranges
	reads := 0
	r := &Reader{size: int64(len(data)), blocks: map[int64][]byte{}, read: func(off int64, n int) ([]byte, error) {
		reads++
		return data[off : off+int64(n)], nil
	}}
	got, err := r.Digest()
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("sha256:%x", sha256.Sum256(data)), got)
	require.Equal(t, 3, reads)
	require.Empty(t, r.blocks, "nothing kept")

	short := &Reader{size: 10, blocks: map[int64][]byte{}, read: func(int64, int) ([]byte, error) { return nil, nil }}
	_, err = short.Digest()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
