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

// A whole file read through the Reader comes back byte for byte, each
// block read once when read in order, and the Reader never holds more
// than maxBlocks blocks, whatever the file's size.
func TestReaderHoldsBoundedBlocks(t *testing.T) {
	data := bytes.Repeat([]byte("router bytes "), 2<<20) // 26 MiB
	reads, most := 0, 0
	var r *Reader
	r = &Reader{size: int64(len(data)), blocks: map[int64][]byte{}, read: func(off int64, n int) ([]byte, error) {
		reads++
		most = max(most, len(r.blocks))
		return data[off : off+int64(n)], nil
	}}
	h := sha256.New()
	_, err := io.Copy(h, io.NewSectionReader(r, 0, r.Size()))
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("%x", sha256.Sum256(data)), fmt.Sprintf("%x", h.Sum(nil)))
	require.Equal(t, (len(data)+readBlock-1)/readBlock, reads, "each block read once")
	require.LessOrEqual(t, most, maxBlocks)
	require.LessOrEqual(t, len(r.blocks), maxBlocks)
	require.Len(t, r.order, len(r.blocks))

	short := &Reader{size: 10, blocks: map[int64][]byte{}, read: func(int64, int) ([]byte, error) { return nil, nil }}
	_, err = short.ReadAt(make([]byte, 4), 0)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
