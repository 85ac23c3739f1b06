package layerwalk_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/layerwalk"
)

// layer is a layer of regular files by name; open, when not nil, replaces
// its content's opener.
func layer(t *testing.T, open func() (io.ReadCloser, error), names ...string) v1.Layer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, n := range names {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte("x"))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	data := b.Bytes()
	if open == nil {
		open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	l, err := tarball.LayerFromOpener(open)
	require.NoError(t, err)
	return l
}

func walk(ctx context.Context, t *testing.T, layers ...v1.Layer) ([]string, error) {
	img, err := mutate.AppendLayers(empty.Image, layers...)
	require.NoError(t, err)
	var names []string
	err = layerwalk.Walk(ctx, img, func(hdr *tar.Header, r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		require.Equal(t, "x", string(data))
		names = append(names, hdr.Name)
		return nil
	})
	return names, err
}

func TestWalkAppliesWhiteouts(t *testing.T) {
	names, err := walk(context.Background(), t, layer(t, nil, "a/gone", "a/kept"), layer(t, nil, "a/.wh.gone", "b"))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a/kept", "b"}, names)
}

func TestWalkReportsALayerThatCannotBeRead(t *testing.T) {
	good := layer(t, nil, "a")
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "big", Mode: 0o644, Size: 1 << 20, Typeflag: tar.TypeReg}))
	cut := b.Bytes()
	bad := layer(t, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(cut)), nil })
	_, err := walk(context.Background(), t, good, bad)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	gone := false
	failing := layer(t, func() (io.ReadCloser, error) {
		if gone {
			return nil, errors.New("blob gone")
		}
		return io.NopCloser(bytes.NewReader(cut)), nil
	})
	gone = true
	_, err = walk(context.Background(), t, good, failing)
	require.ErrorContains(t, err, "read the layers")
}

func TestWalkStopsOnFnErrorAndCancel(t *testing.T) {
	img, err := mutate.AppendLayers(empty.Image, layer(t, nil, "a", "b"))
	require.NoError(t, err)
	stop := errors.New("stop")
	n := 0
	err = layerwalk.Walk(context.Background(), img, func(*tar.Header, io.Reader) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = walk(ctx, t, layer(t, nil, "a"))
	require.ErrorIs(t, err, context.Canceled)
}
