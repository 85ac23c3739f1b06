package tei

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// A trailer is JSON appended to a program the stand-in toolchain writes
// (a router's Facts, an installed sccache's features): the JSON, its
// length as 8 little-endian bytes, then an 8-byte magic. An ELF file may
// carry data after its last section; the loader maps only segments.

// maxTrailer bounds the JSON read back: trailers are a few kilobytes.
const maxTrailer = 1 << 20

// AppendTrailer writes program's bytes, then v as a trailer ending with
// magic, to w.
func AppendTrailer(w io.Writer, program []byte, magic []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(len(data)))
	for _, part := range [][]byte{program, data, size[:], magic} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// ReadTrailer decodes the trailer ending with magic at the end of the file
// at path into v. It reports false, and no error, for a file without one.
func ReadTrailer(path string, magic []byte, v any) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	return readTrailer(f, st.Size(), magic, v)
}

func readTrailer(r io.ReaderAt, size int64, magic []byte, v any) (bool, error) {
	tail := int64(len(magic) + 8)
	if size < tail {
		return false, nil
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil {
		return false, err
	}
	if !bytes.Equal(buf[8:], magic) {
		return false, nil
	}
	n := int64(binary.LittleEndian.Uint64(buf[:8]))
	if n <= 0 || n > maxTrailer || n > size-tail {
		return true, fmt.Errorf("length %d does not fit the file", n)
	}
	data := make([]byte, n)
	if _, err := r.ReadAt(data, size-tail-n); err != nil {
		return true, err
	}
	return true, json.Unmarshal(data, v)
}
