package smoke

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/stretchr/testify/require"
	fstypes "github.com/tonistiigi/fsutil/types"
)

// files is a gateway result of files, read as BuildKit reads them: a
// range past the end is cut at the end.
type files struct {
	data  map[string][]byte
	reads int
}

func (f *files) ToState() (llb.State, error)        { return llb.Scratch(), nil }
func (f *files) Evaluate(ctx context.Context) error { return nil }
func (f *files) ReadDir(context.Context, gateway.ReadDirRequest) ([]*fstypes.Stat, error) {
	return nil, errors.ErrUnsupported
}

func (f *files) ReadFile(_ context.Context, req gateway.ReadRequest) ([]byte, error) {
	f.reads++
	d, ok := f.data[req.Filename]
	if !ok {
		return nil, fs.ErrNotExist
	}
	if req.Range == nil {
		return d, nil
	}
	start := min(req.Range.Offset, len(d))
	return d[start:min(start+req.Range.Length, len(d))], nil
}

func (f *files) StatFile(_ context.Context, req gateway.StatRequest) (*fstypes.Stat, error) {
	d, ok := f.data[req.Path]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return &fstypes.Stat{Path: req.Path, Size: int64(len(d))}, nil
}

// A file the smoke run wrote is read whole when it fits, else as its
// last maxFile bytes, never more: a router that printed megabytes has the
// end of its output judged.
func TestTailIsBounded(t *testing.T) {
	long := append(bytes.Repeat([]byte("log line\n"), 1<<20), []byte("Error: the last line\n")...)
	ref := &files{data: map[string][]byte{"result": []byte("rc router-87 0\n"), "router-87.log": long}}
	require.Equal(t, "rc router-87 0\n", string(tail(t.Context(), ref, "result")))
	require.Equal(t, 1, ref.reads, "a small file: one ranged read")
	got := tail(t.Context(), ref, "router-87.log")
	require.Len(t, got, maxFile)
	require.True(t, bytes.HasSuffix(got, []byte("Error: the last line\n")))
	require.Equal(t, "Error: the last line", lastLine(string(got)))
	require.Nil(t, tail(t.Context(), ref, "absent"))
}
