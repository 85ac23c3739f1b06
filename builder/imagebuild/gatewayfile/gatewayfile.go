// Package gatewayfile reads one file of a BuildKit gateway result through
// ranged reads, a few blocks at a time and bounded (at most maxBlocks
// blocks of readBlock bytes held per file): the ELF headers of a router
// binary, the fat binaries of a router or a library. A file is never held
// whole, whatever its size.
package gatewayfile

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
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

// Reader reads a file of size bytes through read in blocks of readBlock
// bytes, keeping the latest maxBlocks (oldest first in order).
type Reader struct {
	read   func(off int64, n int) ([]byte, error)
	size   int64
	blocks map[int64][]byte
	order  []int64
}

// readBlock is one ranged read: an ELF file's headers, or a run of a fat
// binary's entry headers, in one round trip to the daemon.
const readBlock = 64 << 10

// maxBlocks bounds the blocks a Reader keeps: 256 KiB per file, so that a
// build of many releases, each reading its routers at once, holds a few
// MiB of them in all. A fat binary's entry headers are read in order, and
// the ELF section headers, at the end of the file, stay among the last.
const maxBlocks = 4

// Size is the file's size in bytes.
func (b *Reader) Size() int64 { return b.size }

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
			length := int(min(readBlock, b.size-start))
			data, err := b.read(start, length)
			if err != nil {
				return n, err
			}
			blk = bytes.Clone(data)
			b.keep(start, blk)
		}
		if int(pos-start) >= len(blk) {
			return n, io.ErrUnexpectedEOF
		}
		n += copy(p[n:], blk[pos-start:])
	}
	return n, nil
}

// keep adds the block at start, dropping the oldest beyond maxBlocks.
func (b *Reader) keep(start int64, blk []byte) {
	if len(b.order) >= maxBlocks {
		delete(b.blocks, b.order[0])
		b.order = b.order[1:]
	}
	b.blocks[start] = blk
	b.order = append(b.order, start)
}
