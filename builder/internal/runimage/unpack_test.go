package runimage

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
)

// tarEntry is one entry of a test layer.
type tarEntry struct {
	name string
	typ  byte
	mode int64
	data string
	link string
}

// layerOf makes an uncompressed layer holding entries, in order.
func layerOf(t *testing.T, entries ...tarEntry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link}
		if e.typ == tar.TypeReg {
			hdr.Size = int64(len(e.data))
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if e.typ == tar.TypeReg {
			_, err := tw.Write([]byte(e.data))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	require.NoError(t, err)
	return layer
}

func imageOf(t *testing.T, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	require.NoError(t, err)
	return img
}

func TestUnpack(t *testing.T) {
	lower := layerOf(t,
		tarEntry{name: "etc/", typ: tar.TypeDir, mode: 0o755},
		tarEntry{name: "etc/jetbake/", typ: tar.TypeDir, mode: 0o750},
		tarEntry{name: "etc/jetbake/image.json", typ: tar.TypeReg, mode: 0o644, data: `{"old":true}`},
		tarEntry{name: "usr/local/bin/router-87", typ: tar.TypeReg, mode: 0o755, data: "#!/bin/sh\necho 87\n"},
		tarEntry{name: "bin/busybox", typ: tar.TypeReg, mode: 0o755, data: "busybox"},
		tarEntry{name: "bin/sh", typ: tar.TypeSymlink, mode: 0o777, link: "busybox"},
		tarEntry{name: "bin/abs", typ: tar.TypeSymlink, mode: 0o777, link: "/bin/busybox"},
		tarEntry{name: "bin/hard", typ: tar.TypeLink, link: "bin/busybox"},
		tarEntry{name: "removed", typ: tar.TypeReg, mode: 0o644, data: "gone"},
	)
	upper := layerOf(t,
		tarEntry{name: "etc/jetbake/image.json", typ: tar.TypeReg, mode: 0o600, data: `{"new":true}`},
		tarEntry{name: ".wh.removed", typ: tar.TypeReg, mode: 0o644},
	)
	root := filepath.Join(t.TempDir(), "rootfs")
	require.NoError(t, Unpack(imageOf(t, lower, upper), root))

	data, err := os.ReadFile(filepath.Join(root, "etc/jetbake/image.json"))
	require.NoError(t, err)
	require.Equal(t, `{"new":true}`, string(data), "the upper layer wins")
	info, err := os.Stat(filepath.Join(root, "etc/jetbake/image.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	info, err = os.Stat(filepath.Join(root, "etc/jetbake"))
	require.NoError(t, err)
	require.True(t, info.IsDir())
	require.Equal(t, os.FileMode(0o750), info.Mode().Perm())

	info, err = os.Stat(filepath.Join(root, "usr/local/bin/router-87"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), info.Mode().Perm(), "parents are made for a file without a folder entry")

	link, err := os.Readlink(filepath.Join(root, "bin/sh"))
	require.NoError(t, err)
	require.Equal(t, "busybox", link)
	link, err = os.Readlink(filepath.Join(root, "bin/abs"))
	require.NoError(t, err)
	require.Equal(t, "/bin/busybox", link, "absolute links are kept as they are, for the container")

	bb, err := os.Stat(filepath.Join(root, "bin/busybox"))
	require.NoError(t, err)
	hard, err := os.Stat(filepath.Join(root, "bin/hard"))
	require.NoError(t, err)
	require.True(t, os.SameFile(bb, hard), "a hard link shares the file")
	require.Equal(t, uint64(2), uint64(bb.Sys().(*syscall.Stat_t).Nlink))

	_, err = os.Lstat(filepath.Join(root, "removed"))
	require.ErrorIs(t, err, os.ErrNotExist, "a whiteout removes the lower file")
	_, err = os.Lstat(filepath.Join(root, ".wh.removed"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// An entry whose path climbs out of the root never lands outside it.
func TestUnpackNothingEscapes(t *testing.T) {
	tests := []struct {
		name  string
		entry tarEntry
	}{
		{name: "file", entry: tarEntry{name: "../evil", typ: tar.TypeReg, mode: 0o644, data: "x"}},
		{name: "nested file", entry: tarEntry{name: "a/../../evil", typ: tar.TypeReg, mode: 0o644, data: "x"}},
		{name: "folder", entry: tarEntry{name: "../evil/", typ: tar.TypeDir, mode: 0o755}},
		{name: "symlink", entry: tarEntry{name: "../evil", typ: tar.TypeSymlink, mode: 0o777, link: "x"}},
		{name: "relative symlink target", entry: tarEntry{name: "a/evil", typ: tar.TypeSymlink, mode: 0o777, link: "../../evil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			root := filepath.Join(parent, "rootfs")
			img := imageOf(t, layerOf(t,
				tarEntry{name: "ok", typ: tar.TypeReg, mode: 0o644, data: "fine"},
				tt.entry,
			))
			_ = Unpack(img, root)
			_, err := os.Lstat(filepath.Join(parent, "evil"))
			require.ErrorIs(t, err, os.ErrNotExist, "nothing is written outside the root")
			_, err = os.Lstat(filepath.Join(root, "a", "evil"))
			require.ErrorIs(t, err, os.ErrNotExist, "no link out of the root is made")
		})
	}
}

// A hard link whose target climbs out of the root never links a host file.
func TestUnpackHardLinkStaysInside(t *testing.T) {
	parent := t.TempDir()
	secret := filepath.Join(parent, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s"), 0o600))
	root := filepath.Join(parent, "rootfs")
	img := imageOf(t, layerOf(t,
		tarEntry{name: "a/hard", typ: tar.TypeLink, link: "../secret"},
	))
	_ = Unpack(img, root)
	outside, err := os.Stat(secret)
	require.NoError(t, err)
	if inside, err := os.Stat(filepath.Join(root, "a", "hard")); err == nil {
		require.False(t, os.SameFile(outside, inside))
	}
}

// Unpacking into a folder that already holds the image replaces links and files.
func TestUnpackTwice(t *testing.T) {
	img := imageOf(t, layerOf(t,
		tarEntry{name: "bin/busybox", typ: tar.TypeReg, mode: 0o755, data: "busybox"},
		tarEntry{name: "bin/sh", typ: tar.TypeSymlink, mode: 0o777, link: "busybox"},
		tarEntry{name: "bin/hard", typ: tar.TypeLink, link: "bin/busybox"},
	))
	root := t.TempDir()
	require.NoError(t, Unpack(img, root))
	require.NoError(t, Unpack(img, root))
	link, err := os.Readlink(filepath.Join(root, "bin/sh"))
	require.NoError(t, err)
	require.Equal(t, "busybox", link)
}

// go-containerregistry ends the stream before it reports a refused entry:
// Unpack must still fail rather than return a rootfs cut short.
func TestUnpackReportsRefusedEntries(t *testing.T) {
	img := imageOf(t, layerOf(t,
		tarEntry{name: "ok", typ: tar.TypeReg, mode: 0o644, data: "fine"},
		tarEntry{name: "../evil", typ: tar.TypeReg, mode: 0o644, data: "x"},
		tarEntry{name: "after", typ: tar.TypeReg, mode: 0o644, data: "x"},
	))
	require.Error(t, Unpack(img, filepath.Join(t.TempDir(), "rootfs")))
}

// A "./" entry names the root itself and is fine.
func TestUnpackDotEntry(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rootfs")
	img := imageOf(t, layerOf(t,
		tarEntry{name: "./", typ: tar.TypeDir, mode: 0o755},
		tarEntry{name: "./etc/", typ: tar.TypeDir, mode: 0o755},
		tarEntry{name: "./etc/x", typ: tar.TypeReg, mode: 0o644, data: "x"},
	))
	require.NoError(t, Unpack(img, root))
	require.FileExists(t, filepath.Join(root, "etc", "x"))
}

// Entries that go through a symbolic link inside the root are refused: the
// link could point at the host (a write there, or a hard link to a host file).
// go-containerregistry already drops a file under a symlink of its layer;
// the hard link is refused by Unpack itself.
func TestUnpackRefusesPathsThroughSymlinks(t *testing.T) {
	host := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(host, "secret"), []byte("s3cret"), 0o600))
	for name, entry := range map[string]tarEntry{
		"write":     {name: "host/planted", typ: tar.TypeReg, mode: 0o644, data: "x"},
		"hard link": {name: "stolen", typ: tar.TypeLink, mode: 0o644, link: "host/secret"},
	} {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "rootfs")
			img := imageOf(t, layerOf(t,
				tarEntry{name: "host", typ: tar.TypeSymlink, mode: 0o777, link: host},
				entry,
			))
			err := Unpack(img, root)
			if name == "hard link" {
				require.Error(t, err)
			}
			require.NoFileExists(t, filepath.Join(host, "planted"))
			data, err := os.ReadFile(filepath.Join(root, "stolen"))
			require.Falsef(t, err == nil && string(data) == "s3cret", "a host file was linked into the root")
		})
	}
}
