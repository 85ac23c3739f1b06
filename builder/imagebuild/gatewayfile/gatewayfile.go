// Package gatewayfile reads one file of a BuildKit gateway result through
// ranged reads, a few blocks at a time and bounded: the ELF headers of a
// router binary, the fat binaries of a library; and the digest of a whole
// file (Reader.Digest), streamed in large ranges, never held whole.
package gatewayfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strings"

	gateway "github.com/moby/buildkit/frontend/gateway/client"
)

// Open opens the file at name in ref for ranged reads.
func Open(ctx context.Context, ref gateway.Reference, name string) (*Reader, error) {
	st, err := ref.StatFile(ctx, gateway.StatRequest{Path: name})
	if err != nil {
		return nil, err
	}
	return &Reader{read: func(off int64, n int) ([]byte, error) {
		return ref.ReadFile(ctx, gateway.ReadRequest{Filename: name, Range: &gateway.FileRange{Offset: int(off), Length: n}})
	}, size: st.Size, blocks: map[int64][]byte{}}, nil
}

// ReadELF returns the DT_NEEDED entries and PT_INTERP of an ELF file.
func ReadELF(r io.ReaderAt) (needed []string, interp string, err error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		data, err := io.ReadAll(p.Open())
		if err != nil {
			return nil, "", err
		}
		interp = strings.TrimRight(string(data), "\x00")
	}
	needed, err = f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, "", err
	}
	return needed, interp, nil
}

// Reader reads a file of size bytes through read in 64 KiB blocks,
// keeping the latest ones.
type Reader struct {
	read   func(off int64, n int) ([]byte, error)
	size   int64
	blocks map[int64][]byte
}

const readBlock = 64 << 10

// digestRange is how much of a file one read of Digest asks for: each
// read mounts the result in the daemon, so as few as fit under BuildKit's
// gRPC message bound (16 MiB): one for the stand-in router, a few dozen
// for a router of hundreds of MiB.
const digestRange = 12 << 20

// Digest is the sha256 of the whole file ("sha256:..."), read in ranges
// of digestRange, none kept.
func (b *Reader) Digest() (string, error) {
	h := sha256.New()
	for off := int64(0); off < b.size; {
		data, err := b.read(off, int(min(digestRange, b.size-off)))
		if err != nil {
			return "", err
		}
		if len(data) == 0 {
			return "", io.ErrUnexpectedEOF
		}
		h.Write(data)
		off += int64(len(data))
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil)), nil
}

// maxBlocks bounds the blocks a Reader keeps: 4 MiB.
const maxBlocks = 64

// ReadAt implements io.ReaderAt.
func (b *Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos >= b.size {
			return n, io.EOF
		}
		start := pos - pos%readBlock
		blk, ok := b.blocks[start]
		if !ok {
			if len(b.blocks) >= maxBlocks {
				// A fat binary's entry headers are spread over the whole
				// section: keep memory bounded, not every block read.
				clear(b.blocks)
			}
			length := int(min(readBlock, b.size-start))
			data, err := b.read(start, length)
			if err != nil {
				return n, err
			}
			blk = bytes.Clone(data)
			b.blocks[start] = blk
		}
		if int(pos-start) >= len(blk) {
			return n, io.ErrUnexpectedEOF
		}
		n += copy(p[n:], blk[pos-start:])
	}
	return n, nil
}
