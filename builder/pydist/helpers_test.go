package pydist_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
)

// The folders NGC's PyTorch containers and a venv install into.
const (
	ngcSite  = "/usr/local/lib/python3.12/dist-packages"
	debSite  = "/usr/lib/python3/dist-packages"
	venvSite = "/opt/venv/lib/python3.12/site-packages"
	ngcTorch = "2.8.0a0+5228986c39.nv25.6"
)

// tree is a file system: absolute path to content; a nil content is a
// whiteout in a layer (the path's base is the file deleted).
type tree map[string][]byte

// dist adds a distribution as pip writes it: a .dist-info with METADATA,
// RECORD, INSTALLER and WHEEL, and the package's __init__.py.
func (t tree) dist(site, name, version string) tree {
	pkg := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	info := strings.ReplaceAll(name, "-", "_") + "-" + version + ".dist-info"
	t[site+"/"+pkg+"/__init__.py"] = []byte("__version__ = " + strconv.Quote(version) + "\n")
	meta := "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version +
		"\nSummary: Tensors and Dynamic neural networks in Python with strong GPU acceleration\n" +
		"Home-page: https://pytorch.org/\nAuthor: PyTorch Team\nLicense: BSD-3\n" +
		"Classifier: Programming Language :: Python :: 3\nRequires-Python: >=3.9.0\n" +
		"Description-Content-Type: text/markdown\nRequires-Dist: filelock\nRequires-Dist: typing-extensions>=4.10.0\n" +
		"Provides-Extra: opt-einsum\nRequires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\n\n" +
		"![PyTorch Logo](https://github.com/pytorch/pytorch/raw/main/docs/source/_static/img/pytorch-logo-dark.png)\n\nName: not-a-header\n"
	t[site+"/"+info+"/METADATA"] = []byte(meta)
	t[site+"/"+info+"/INSTALLER"] = []byte("pip\n")
	t[site+"/"+info+"/WHEEL"] = []byte("Wheel-Version: 1.0\nGenerator: bdist_wheel (0.43.0)\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_aarch64\n\n")
	var rec strings.Builder
	for _, f := range []string{pkg + "/__init__.py", info + "/METADATA", info + "/INSTALLER", info + "/WHEEL"} {
		sum := sha256.Sum256(t[site+"/"+f])
		rec.WriteString(f + ",sha256=" + base64.RawURLEncoding.EncodeToString(sum[:]) + "," + strconv.Itoa(len(t[site+"/"+f])) + "\n")
	}
	rec.WriteString(info + "/RECORD,,\n")
	t[site+"/"+info+"/RECORD"] = []byte(rec.String())
	return t
}

// venv adds a venv's pyvenv.cfg as python -m venv writes it.
func (t tree) venv(prefix string, systemSite bool) tree {
	t[prefix+"/pyvenv.cfg"] = []byte("home = /usr/bin\ninclude-system-site-packages = " + strconv.FormatBool(systemSite) +
		"\nversion = 3.12.3\nexecutable = /usr/bin/python3.12\ncommand = /usr/bin/python3 -m venv --system-site-packages " + prefix + "\n")
	return t
}

// ngcBase is an NGC PyTorch container's stack: torch and what its
// constraint file pins.
func ngcBase() tree {
	t := tree{"/etc/pip/constraint.txt": []byte("# NVIDIA: prevent unintentional overwriting\ntorch==" + ngcTorch +
		"\nnumpy==1.26.4 ; python_version >= \"3.10\"\nTriton == 3.3.0  # the compiler\n-c /etc/other.txt\n")}
	t.dist(ngcSite, "torch", ngcTorch).dist(ngcSite, "numpy", "1.26.4").dist(ngcSite, "triton", "3.3.0")
	return t.dist(ngcSite, "filelock", "3.13.1")
}

// clone copies t.
func (t tree) clone() tree {
	out := tree{}
	for k, v := range t {
		out[k] = v
	}
	return out
}

// write writes t under a new folder and returns it.
func (t tree) write(tb testing.TB) string {
	tb.Helper()
	root := tb.TempDir()
	for name, data := range t {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(tb, os.WriteFile(p, data, 0o644))
	}
	return root
}

// layer is t as one image layer; nil contents are whiteouts.
func (t tree) layer(tb testing.TB) v1.Layer {
	tb.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for name, data := range t {
		if data == nil {
			name = filepath.ToSlash(filepath.Join(filepath.Dir(name), ".wh."+filepath.Base(name)))
		}
		require.NoError(tb, tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(name, "/"), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(tb, err)
	}
	require.NoError(tb, tw.Close())
	data := b.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	require.NoError(tb, err)
	return l
}

// image stacks the trees as layers.
func image(tb testing.TB, layers ...tree) v1.Image {
	tb.Helper()
	img := empty.Image
	for _, l := range layers {
		var err error
		img, err = mutate.AppendLayers(img, l.layer(tb))
		require.NoError(tb, err)
	}
	return img
}
