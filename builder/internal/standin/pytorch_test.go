package standin_test

import (
	"archive/tar"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// TestPyTorchBasePushed pushes each line's stand-in and reads back what a
// jetbake audit and the vendor-stack check read: torch's dist-info and
// version.py, its CUDA library, torchvision and tqdm, the constraint file
// that pins the three, Python and pip.
func TestPyTorchBasePushed(t *testing.T) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	k, err := standin.BedKit(root)
	require.NoError(t, err)
	host := testregistry.New(t)
	_, err = standin.PyTorchBase(context.Background(), k, host, "6.1")
	require.ErrorContains(t, err, `no container for JetPack "6.1": use one of 6.2, 7.0`)
	for _, c := range []struct{ jetpack, ref, version, cuda string }{
		{"6.2", host + "/nvidia/pytorch:25.06-py3-igpu", "2.8.0a0+5228986c39.nv25.06", `cuda = "12.9"`},
		{"7.0", host + "/nvidia/pytorch:25.08-py3", "2.8.0a0+34c6371d24.nv25.08", `cuda = "13.0"`},
	} {
		ref, err := standin.PyTorchBase(context.Background(), k, host, c.jetpack)
		require.NoError(t, err)
		require.Equal(t, c.ref, ref)
		r, err := name.ParseReference(ref, name.Insecure)
		require.NoError(t, err)
		img, err := remote.Image(r)
		require.NoError(t, err)
		files := map[string]string{}
		rc := mutate.Extract(img)
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			if hdr.Typeflag == tar.TypeSymlink {
				files[hdr.Name] = "-> " + hdr.Linkname
				continue
			}
			data, err := io.ReadAll(tr)
			require.NoError(t, err)
			if strings.HasSuffix(hdr.Name, ".py") || strings.Contains(hdr.Name, ".dist-info/") || strings.HasPrefix(hdr.Name, "etc/") {
				files[hdr.Name] = string(data)
			} else {
				files[hdr.Name] = ""
			}
		}
		require.NoError(t, rc.Close())
		site := "usr/local/lib/python3.11/dist-packages/"
		info := site + "torch-" + c.version + ".dist-info/"
		require.Contains(t, files[info+"METADATA"], "Name: torch\nVersion: "+c.version+"\n")
		require.Equal(t, "pip\n", files[info+"INSTALLER"])
		require.Contains(t, files[info+"RECORD"], "torch/lib/libtorch_cuda.so,sha256=")
		require.Contains(t, files[site+"torch/version.py"], c.cuda)
		require.Contains(t, files, site+"torch/lib/libtorch_cuda.so")
		require.Equal(t, "torch=="+c.version+"\ntorchvision=="+standin.VendorTorchVision+"\ntqdm=="+standin.VendorTqdm+"\n", files["etc/pip/constraint.txt"])
		require.Contains(t, files[site+"torchvision-"+standin.VendorTorchVision+".dist-info/METADATA"], "Requires-Dist: torch=="+c.version+"\n",
			"built against the base's torch")
		require.Contains(t, files, site+"tqdm-"+standin.VendorTqdm+".dist-info/RECORD")
		require.Equal(t, "-> python3.11", files["usr/bin/python3"])
		require.Contains(t, files, "usr/lib/python3/dist-packages/pip/__init__.py")
	}
}
