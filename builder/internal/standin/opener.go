package standin

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// layer collects a stand-in's files and writes them as one reproducible
// tar layer: sorted, every parent folder present, times at the epoch.
type layer struct {
	entries map[string]*tar.Header
	data    map[string][]byte
}

func newLayer() *layer {
	return &layer{entries: map[string]*tar.Header{}, data: map[string][]byte{}}
}

// dir adds a folder and its parents.
func (l *layer) dir(name string) {
	for d := strings.TrimSuffix(name, "/"); d != "." && d != "" && d != "/"; d = path.Dir(d) {
		if _, ok := l.entries[d]; ok {
			return
		}
		l.entries[d] = &tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}
	}
}

// file adds a regular file and its parent folders.
func (l *layer) file(name string, mode int64, data []byte) {
	l.dir(path.Dir(name))
	l.entries[name] = &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))}
	l.data[name] = data
}

// copyFile adds the file at src as name.
func (l *layer) copyFile(name string, mode int64, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	l.file(name, mode, data)
	return nil
}

// link adds a symbolic link and its parent folders.
func (l *layer) link(name, target string) {
	l.dir(path.Dir(name))
	l.entries[name] = &tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}
}

// build writes the tar and returns it as a layer.
func (l *layer) build() (v1.Layer, error) {
	data, err := l.tar()
	if err != nil {
		return nil, err
	}
	// The compressed bytes are kept: the digest and the push read them both.
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithCompressedCaching)
}

// tar is the layer's uncompressed tar.
func (l *layer) tar() ([]byte, error) {
	names := make([]string, 0, len(l.entries))
	for n := range l.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		hdr := *l.entries[n]
		hdr.ModTime = time.Unix(0, 0)
		if err := tw.WriteHeader(&hdr); err != nil {
			return nil, err
		}
		if data, ok := l.data[n]; ok {
			if _, err := tw.Write(data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
