package standin

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

const (
	jetpackBase = "nvcr.io/nvidia/l4t-jetpack:r36.4.0"
	l4tCUDABase = "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"
	cudaDevel   = "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04"
	cudaRuntime = "nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04"
	jp5Base     = "nvcr.io/nvidia/l4t-jetpack:r35.4.1"
)

var fakeBusybox = []byte("\x7fELF fake arm64 busybox")

// testKit is a kit with a fake static busybox and a fake glibc tree laid
// out as Debian's packages unpack; its ELF and Go builds are cached in the
// checkout's bin/standin, as the end-to-end tests' are.
func testKit(t *testing.T) Kit {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	k := Kit{Busybox: filepath.Join(dir, "busybox"), Glibc: filepath.Join(dir, "glibc"),
		Cache: filepath.Join(root, "bin", "standin"), Source: root}
	require.NoError(t, os.WriteFile(k.Busybox, fakeBusybox, 0o755))
	for _, name := range glibcFiles {
		path := filepath.Join(k.Glibc, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		if name == "lib/ld-linux-aarch64.so.1" {
			require.NoError(t, os.Symlink("aarch64-linux-gnu/ld-linux-aarch64.so.1", path))
			continue
		}
		require.NoError(t, os.WriteFile(path, []byte("glibc "+name), 0o755))
	}
	return k
}

// entry is one file of an image's flattened file system.
type entry struct {
	typ  byte
	link string
	mode int64
	data string
}

// files reads img's flattened file system.
func files(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		out[hdr.Name] = entry{typ: hdr.Typeflag, link: hdr.Linkname, mode: hdr.Mode, data: string(data)}
	}
}

func TestForPlan(t *testing.T) {
	p := &plan.Plan{Releases: []plan.Release{
		{Name: "jetpack5.1", L4T: "35.4.1", CUDA: "11.4", Ubuntu: "20.04", BuildBase: jp5Base, RuntimeBase: jp5Base},
		{Name: "jetpack6.1", L4T: "36.4.0", CUDA: "12.6", Ubuntu: "22.04", BuildBase: jetpackBase, RuntimeBase: l4tCUDABase},
		{Name: "jetpack6.2", L4T: "36.4.3", CUDA: "12.6", Ubuntu: "22.04", BuildBase: jetpackBase, RuntimeBase: l4tCUDABase},
		{Name: "jetpack7.2", L4T: "39.2.0", CUDA: "13.2", Ubuntu: "24.04", BuildBase: cudaDevel, RuntimeBase: cudaRuntime},
	}}
	ssl3 := []string{"libssl.so.3", "libcrypto.so.3", "libgcc_s.so.1", "libstdc++.so.6"}
	tegra, sbsa := computecap.FlavourTegra, computecap.FlavourSBSA
	require.Equal(t, []Base{
		{Ref: cudaDevel, CUDA: "13.2", Flavour: sbsa, Devel: true, CUDALibs: true, Ubuntu: "24.04", Index: true, Libs: ssl3, CABundle: true},
		{Ref: cudaRuntime, CUDA: "13.2", Flavour: sbsa, CUDALibs: true, Ubuntu: "24.04", Index: true, Libs: ssl3, CABundle: true},
		{Ref: l4tCUDABase, CUDA: "12.6", Flavour: tegra, Ubuntu: "22.04", Libs: ssl3, CABundle: true},
		{Ref: jp5Base, L4T: "35.4.1", CUDA: "11.4", Flavour: tegra, Devel: true, CUDALibs: true, Ubuntu: "20.04",
			Libs: []string{"libssl.so.1.1", "libcrypto.so.1.1", "libgcc_s.so.1", "libstdc++.so.6"}, CABundle: true},
		{Ref: jetpackBase, L4T: "36.4.0", CUDA: "12.6", Flavour: tegra, Devel: true, CUDALibs: true, Ubuntu: "22.04", Libs: ssl3, CABundle: true},
	}, ForPlan(p))
	require.Empty(t, ForPlan(&plan.Plan{}))
}

// A base used as build base by one release and runtime base by another is
// listed once, as the first release that uses it describes it.
func TestForPlanSharedBase(t *testing.T) {
	const shared = "nvcr.io/nvidia/l4t-base:r36.2.0"
	p := &plan.Plan{Releases: []plan.Release{
		{Name: "a", L4T: "36.2.0", CUDA: "12.2", BuildBase: shared, RuntimeBase: shared},
	}}
	require.Equal(t, []Base{{Ref: shared, L4T: "36.2.0", CUDA: "12.2", Flavour: computecap.FlavourTegra, Devel: true, CUDALibs: true,
		Libs: []string{"libssl.so.3", "libcrypto.so.3", "libgcc_s.so.1", "libstdc++.so.6"}, CABundle: true}}, ForPlan(p))
}

func TestTegraRelease(t *testing.T) {
	tests := []struct {
		l4t  string
		want string
	}{
		{l4t: "36.4.3", want: "# R36 (release), REVISION: 4.3, "},
		{l4t: "39.2.0", want: "# R39 (release), REVISION: 2.0, "},
		{l4t: "35.4.1", want: "# R35 (release), REVISION: 4.1, "},
		{l4t: "38", want: "# R38 (release), REVISION: 0.0, "},
	}
	for _, tt := range tests {
		t.Run(tt.l4t, func(t *testing.T) {
			got := TegraRelease(tt.l4t)
			require.True(t, strings.HasPrefix(got, tt.want), got)
			require.True(t, strings.HasSuffix(got, "\n"))
			require.Equal(t, 1, strings.Count(got, "\n"))
			require.Contains(t, got, "EABI: aarch64")
		})
	}
}

func TestImage(t *testing.T) {
	kit := testKit(t)
	tests := []struct {
		name    string
		base    Base
		wantL4T string
	}{
		{name: "l4t build base", base: Base{Ref: jetpackBase, L4T: "36.4.3", CUDA: "12.6"}, wantL4T: "# R36 (release), REVISION: 4.3, "},
		{name: "cuda base", base: Base{Ref: cudaRuntime, CUDA: "13.2", Index: true, Libs: []string{"libssl.so.3"}, CABundle: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := kit.Image(t.Context(), tt.base)
			require.NoError(t, err)

			mt, err := img.MediaType()
			require.NoError(t, err)
			require.Equal(t, types.OCIManifestSchema1, mt)
			m, err := img.Manifest()
			require.NoError(t, err)
			require.Equal(t, types.OCIConfigJSON, m.Config.MediaType)
			require.Len(t, m.Layers, 1)

			cf, err := img.ConfigFile()
			require.NoError(t, err)
			require.Equal(t, "linux", cf.OS)
			require.Equal(t, "arm64", cf.Architecture)
			require.Equal(t, int64(0), cf.Created.Unix())
			require.Equal(t, []string{"/bin/sh"}, cf.Config.Cmd)
			require.Contains(t, cf.Config.Env, "CUDA_VERSION="+tt.base.CUDA)
			require.Equal(t, map[string]string{"io.jetbake.standin": tt.base.Ref}, cf.Config.Labels)

			fs := files(t, img)
			require.Equal(t, entry{typ: tar.TypeReg, mode: 0o755, data: string(fakeBusybox)}, fs["bin/busybox"])
			for _, applet := range []string{"sh", "echo", "cat", "mkdir", "chmod", "uname"} {
				e := fs["bin/"+applet]
				require.Equal(t, byte(tar.TypeSymlink), e.typ, applet)
				require.Equal(t, "busybox", e.link, applet)
			}
			for _, dir := range []string{"bin", "etc", "tmp", "usr/local/cuda"} {
				require.Equal(t, byte(tar.TypeDir), fs[dir].typ, dir)
			}
			require.Equal(t, entry{typ: tar.TypeSymlink, link: "aarch64-linux-gnu/ld-linux-aarch64.so.1", mode: 0o777}, fs["lib/ld-linux-aarch64.so.1"],
				"the loader every aarch64 program names as its interpreter")
			for _, name := range []string{"lib/aarch64-linux-gnu/libc.so.6", "sbin/ldconfig", "etc/ld.so.conf"} {
				require.Equal(t, "glibc "+name, fs[name].data, name)
			}

			var version struct {
				CUDA struct {
					Version string `json:"version"`
				} `json:"cuda"`
			}
			require.NoError(t, json.Unmarshal([]byte(fs["usr/local/cuda/version.json"].data), &version))
			require.Equal(t, tt.base.CUDA, version.CUDA.Version)
			_, ssl := fs["usr/lib/aarch64-linux-gnu/libssl.so.3"]
			_, ca := fs[strings.TrimPrefix(CABundlePath, "/")]
			require.Equal(t, tt.base.Libs != nil, ssl, "libssl only where the base lists it")
			require.Equal(t, tt.base.CABundle, ca)

			release, ok := fs["etc/nv_tegra_release"]
			if tt.wantL4T == "" {
				require.False(t, ok, "only L4T bases carry /etc/nv_tegra_release")
				return
			}
			require.True(t, strings.HasPrefix(release.data, tt.wantL4T), release.data)
		})
	}
}

// The same busybox and base give the same image, byte for byte.
func TestImageReproducible(t *testing.T) {
	kit := testKit(t)
	base := Base{Ref: jetpackBase, L4T: "36.4.3", CUDA: "12.6", Flavour: computecap.FlavourTegra, Devel: true, Libs: []string{"libssl.so.3"}}
	a, err := kit.Image(t.Context(), base)
	require.NoError(t, err)
	b, err := kit.Image(t.Context(), base)
	require.NoError(t, err)
	da, err := a.Digest()
	require.NoError(t, err)
	db, err := b.Digest()
	require.NoError(t, err)
	require.Equal(t, da, db)

	other, err := kit.Image(t.Context(), Base{Ref: jetpackBase, L4T: "36.4.0", CUDA: "12.6"})
	require.NoError(t, err)
	dother, err := other.Digest()
	require.NoError(t, err)
	require.NotEqual(t, da, dother)
}

func TestImageNoBusybox(t *testing.T) {
	kit := testKit(t)
	kit.Busybox = filepath.Join(t.TempDir(), "busybox")
	_, err := kit.Image(t.Context(), Base{Ref: jetpackBase})
	require.Error(t, err)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Contains(t, err.Error(), "make deps")

	kit = testKit(t)
	kit.Glibc = filepath.Join(t.TempDir(), "glibc")
	_, err = kit.Image(t.Context(), Base{Ref: jetpackBase})
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Contains(t, err.Error(), "arm64 glibc")
	require.Contains(t, err.Error(), "make deps")
}

func TestPush(t *testing.T) {
	host := testregistry.New(t)
	kit := testKit(t)
	ctx := t.Context()

	t.Run("image", func(t *testing.T) {
		base := Base{Ref: jetpackBase, L4T: "36.4.3", CUDA: "12.6"}
		got, err := kit.Push(ctx, host, base)
		require.NoError(t, err)
		require.Equal(t, host+"/nvidia/l4t-jetpack:r36.4.0", got)

		ref, err := name.ParseReference(got, name.Insecure)
		require.NoError(t, err)
		desc, err := remote.Get(ref)
		require.NoError(t, err)
		require.Equal(t, types.OCIManifestSchema1, desc.MediaType)
		want, err := kit.Image(ctx, base)
		require.NoError(t, err)
		wantDigest, err := want.Digest()
		require.NoError(t, err)
		require.Equal(t, wantDigest, desc.Digest)
	})
	t.Run("index", func(t *testing.T) {
		base := Base{Ref: cudaRuntime, CUDA: "13.2", Index: true}
		got, err := kit.Push(ctx, host, base)
		require.NoError(t, err)
		require.Equal(t, host+"/nvidia/cuda:13.2.0-runtime-ubuntu24.04", got)

		ref, err := name.ParseReference(got, name.Insecure)
		require.NoError(t, err)
		idx, err := remote.Index(ref)
		require.NoError(t, err)
		im, err := idx.IndexManifest()
		require.NoError(t, err)
		require.Equal(t, types.OCIImageIndex, im.MediaType)
		require.Len(t, im.Manifests, 1)
		require.Equal(t, &v1.Platform{OS: "linux", Architecture: "arm64"}, im.Manifests[0].Platform)

		img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		require.Contains(t, cf.Config.Env, "CUDA_VERSION=13.2")
	})
	t.Run("errors", func(t *testing.T) {
		noBusybox := kit
		noBusybox.Busybox = filepath.Join(t.TempDir(), "none")
		_, err := noBusybox.Push(ctx, host, Base{Ref: jetpackBase})
		require.ErrorIs(t, err, os.ErrNotExist)

		_, err = kit.Push(ctx, host, Base{Ref: "Not A Ref"})
		require.Error(t, err)
		require.Contains(t, err.Error(), `stand-in "Not A Ref"`)
	})
}
