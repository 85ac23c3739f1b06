// Package standin makes arm64 stand-ins for NVIDIA's base images, for the
// tests and `make demo` on machines that cannot pull nvcr.io: Debian's static
// busybox and arm64 glibc (the dynamic loader, libc and ldconfig, so that
// dynamically linked aarch64 programs run in them as in the real Ubuntu-based
// images), plus the files that identify each base (/etc/nv_tegra_release of
// its L4T, /etc/os-release, the CUDA tree with version.json and its targets
// folder), named like the real ones, and what the router needs from a base
// at run time: its Ubuntu's libssl and libcrypto and the GCC and C++
// runtimes, as real aarch64 shared objects with their sonames, a CA bundle,
// and in CUDA runtime images CUDA's libraries. Every base has a stand-in
// apt-get over a local package index (apt.go). Devel (build) bases carry
// what CUDA devel images link against (cuda.h, static libraries, the driver
// stub stubs/libcuda.so) and the stand-in Rust toolchain that compiles
// text-embeddings-inference's router (toolchain.go, package tei).
package standin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

// Base describes one stand-in base image.
type Base struct {
	// Ref is the real image's reference, e.g. "nvcr.io/nvidia/l4t-jetpack:r36.4.0".
	Ref string
	// L4T is the Jetson Linux version it carries in /etc/nv_tegra_release, or "".
	L4T string
	// CUDA is the CUDA version in version.json and CUDA_VERSION.
	CUDA string
	// Flavour is the CUDA build it carries: Tegra (targets/aarch64-linux)
	// or SBSA (targets/sbsa-linux). Empty lays out only
	// /usr/local/cuda/version.json.
	Flavour computecap.Flavour
	// Devel makes a build base: CUDA's driver stub, stubs/libcuda.so
	// (soname libcuda.so.1), cuda.h and the static libraries in the CUDA
	// tree, as the devel images that builds run on have, and the stand-in
	// Rust toolchain. It implies CUDALibs.
	Devel bool
	// CUDALibs puts CUDA's shared libraries of the release (libcudart,
	// libcublas, libcublasLt, libcurand, libnvrtc) in the CUDA tree, as
	// NVIDIA's nvidia/cuda runtime and devel images have them; without, apt
	// can install them (cuda-cudart-X-Y, ...).
	CUDALibs bool
	// CUDARoot puts the CUDA tree there, with CUDA_ROOT set to it, instead
	// of /usr/local/cuda-X.Y and its /usr/local/cuda link.
	CUDARoot string
	// Ubuntu is the Ubuntu release, "22.04": /etc/os-release and the names
	// of its packages.
	Ubuntu string
	// Index makes it a one-platform index, as NVIDIA's multi-arch nvidia/cuda tags are.
	Index bool
	// Libs are shared libraries (sonames) in /usr/lib/aarch64-linux-gnu,
	// e.g. "libssl.so.3", each a real aarch64 shared object with that soname
	// (see UbuntuLibs).
	Libs []string
	// CABundle puts a CA bundle at CABundlePath, as ca-certificates does.
	CABundle bool
	// Cross makes a cross build base (crossbase.go): a linux/amd64 image
	// with Debian's aarch64 cross compiler, an x86_64 nvcc and the
	// target's files. Implies Devel.
	Cross bool
	// HostSSL puts the build machine's OpenSSL (libssl-dev, x86_64) in a
	// cross build base instead of the target's (libssl-dev:arm64), as a
	// base made by someone who forgot the :arm64: the wrong-architecture row.
	HostSSL bool
	// NativeNvcc gives an arm64 devel base of a Tegra release NVIDIA's
	// arm64 nvcc 11.8 and Debian's arm64 GCC 11 as build-essential
	// (realnvcc.go): the native path's compile of the router's kernels runs
	// NVIDIA's cicc and ptxas, under QEMU on an amd64 node.
	NativeNvcc bool
}

// Platform is the image's platform: linux/amd64 for a cross build base,
// else linux/arm64.
func (b Base) Platform() v1.Platform {
	if b.Cross {
		return v1.Platform{OS: "linux", Architecture: "amd64"}
	}
	return v1.Platform{OS: "linux", Architecture: "arm64"}
}

// CABundlePath is where Debian and Ubuntu's ca-certificates put the bundle,
// which the build's smoke check looks for.
const CABundlePath = smoke.CABundlePath

// SSLSoname is the libssl soname of an Ubuntu release: 1.1 on 20.04, 3 later.
func SSLSoname(ubuntu string) string {
	if ubuntu != "" && ubuntu < "22.04" {
		return "libssl.so.1.1"
	}
	return "libssl.so.3"
}

// CryptoSoname is the libcrypto soname that goes with SSLSoname.
func CryptoSoname(ubuntu string) string {
	return strings.Replace(SSLSoname(ubuntu), "libssl", "libcrypto", 1)
}

// ForPlan lists the stand-ins that every base of p needs, once each.
func ForPlan(p *plan.Plan) []Base {
	seen := map[string]bool{}
	var out []Base
	add := func(ref string, rel plan.Release, build bool) {
		if seen[ref] {
			return
		}
		seen[ref] = true
		cudaImage := strings.Contains(ref, "/nvidia/cuda:")
		b := Base{Ref: ref, CUDA: rel.CUDA, Flavour: flavourOf(rel.L4T), Devel: build, Ubuntu: rel.Ubuntu,
			Index: cudaImage, CUDALibs: build || cudaImage, Libs: UbuntuLibs(rel.Ubuntu), CABundle: true}
		if build && strings.Contains(ref, "/l4t-") {
			b.L4T = rel.L4T
		}
		out = append(out, b)
	}
	for _, rel := range p.Releases {
		add(rel.BuildBase, rel, true)
		add(rel.RuntimeBase, rel, false)
		if ref := rel.CrossBuildBase; ref != "" && !seen[ref] {
			seen[ref] = true
			out = append(out, crossBase(ref, rel))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out
}

// flavourOf is the CUDA flavour of an L4T release's JetPack line, from the
// table of Jetson facts; "" when the table does not know it.
func flavourOf(l4t string) computecap.Flavour {
	v, err := computecap.ParseL4TVersion(l4t)
	if err != nil {
		return ""
	}
	f, _, ok := computecap.DefaultTable().FlavourOfL4T(v.Major)
	if !ok {
		return ""
	}
	return f
}

// Kit holds what the stand-ins are made from: Debian's arm64 busybox-static
// and glibc, unpacked by `make deps`, and a folder for the aarch64 shared
// objects compiled with Debian's cross compiler.
type Kit struct {
	// Busybox is the static arm64 busybox.
	Busybox string
	// Glibc is the root of Debian's unpacked arm64 libc6 and libc-bin.
	Glibc string
	// Python is the root of Debian's unpacked arm64 Python 3 and pip, which
	// the stand-in PyTorch bases carry (pytorch.go).
	Python string
	// Cache holds the compiled shared objects.
	Cache string
	// Source is the jetbake module's root, which the stand-in toolchain's
	// Go programs (package tei) are built from for build bases.
	Source string
	// Cross is the root of Debian's unpacked amd64 aarch64 cross compiler,
	// its amd64 libraries and busybox-static, which `make deps` fetches
	// into bin/deps/cross-amd64: the cross build bases are made of it.
	Cross string
}

// Image builds the stand-in for b.
func (k Kit) Image(ctx context.Context, b Base) (v1.Image, error) {
	layer, err := k.rootLayer(ctx, b)
	if err != nil {
		return nil, err
	}
	layers := []v1.Layer{layer}
	if b.Cross {
		// The cross compiler's layer first, the same in every cross base,
		// then NVIDIA's nvcc where the base carries it.
		tree, err := k.crossTreeLayer()
		if err != nil {
			return nil, err
		}
		layers = []v1.Layer{tree, layer}
	}
	if b.RealNvcc() {
		// NVIDIA's nvcc (and, natively, Debian's GCC 11) below the
		// base's own files.
		nvcc, err := k.realNvccLayer(b.toolArch(), true)
		if err != nil {
			return nil, err
		}
		layers = append(layers[:len(layers)-1], nvcc, layer)
	}
	img, cf, err := ociImage(layers, b.Platform())
	if err != nil {
		return nil, err
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	if b.CUDARoot != "" && b.Devel {
		// A devel image with CUDA elsewhere puts its nvcc on PATH.
		path = b.CUDARoot + "/bin:" + path
	}
	cf.Config.Env = []string{"PATH=" + path, "CUDA_VERSION=" + b.CUDA}
	if b.CUDARoot != "" {
		cf.Config.Env = append(cf.Config.Env, "CUDA_ROOT="+b.CUDARoot)
	}
	cf.Config.Cmd = []string{"/bin/sh"}
	cf.Config.Labels = map[string]string{"io.jetbake.standin": b.Ref}
	return mutate.ConfigFile(img, cf)
}

// ociImage is layers as an OCI image of platform, created at the epoch,
// and a copy of its config for the caller to fill in (mutate.ConfigFile).
func ociImage(layers []v1.Layer, platform v1.Platform) (v1.Image, *v1.ConfigFile, error) {
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = platform.OS, platform.Architecture
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	return img, cf, nil
}

// rootLayer is the stand-in's single layer.
func (k Kit) rootLayer(ctx context.Context, b Base) (v1.Layer, error) {
	if b.Cross {
		l, err := k.crossRootLayer(ctx, b)
		if err != nil {
			return nil, err
		}
		return l.build()
	}
	busybox, err := os.ReadFile(k.Busybox)
	if err != nil {
		return nil, fmt.Errorf("read busybox (run 'make deps' to fetch Debian's arm64 busybox-static): %w", err)
	}
	l := newLayer()
	for _, d := range []string{"bin", "etc/ssl/certs", "tmp", "usr/bin", "usr/lib/aarch64-linux-gnu", "usr/local/bin"} {
		l.dir(d)
	}
	l.file("bin/busybox", 0o755, busybox)
	for _, a := range applets {
		l.link("bin/"+a, "busybox")
	}
	if b.RealNvcc() {
		// Ubuntu's /bin/sh, dash (in realNvccLayer's GCC tree), which nvcc
		// runs its steps with: busybox's sh runs its own applets first,
		// and nvcc --lib would get busybox's ar.
		l.link("bin/sh", "dash")
	}
	// coreutils' install, which busybox-static lacks.
	l.file("usr/bin/install", 0o755, installScript)
	if err := k.addGlibc(l); err != nil {
		return nil, err
	}
	for _, lib := range b.Libs {
		path, err := BuildSharedObject(ctx, k.Cache, ARM64, lib)
		if err != nil {
			return nil, err
		}
		if err := l.copyFile("usr/lib/aarch64-linux-gnu/"+lib, 0o644, path); err != nil {
			return nil, err
		}
	}
	if err := k.addCUDA(ctx, l, b); err != nil {
		return nil, err
	}
	if b.L4T != "" {
		l.file("etc/nv_tegra_release", 0o644, []byte(TegraRelease(b.L4T)))
	}
	if b.Ubuntu != "" {
		l.file("etc/os-release", 0o644, []byte(osRelease(b.Ubuntu)))
	}
	// The index's installed packages (the CA bundle, OpenSSL, CUDA's
	// libraries) put their files in place too.
	x, err := k.aptIndexFor(ctx, b)
	if err != nil {
		return nil, err
	}
	l.addApt(x)
	if b.Devel {
		if err := k.addToolchain(ctx, l, b); err != nil {
			return nil, err
		}
	}
	return l.build()
}

// osRelease is /etc/os-release of an Ubuntu release, the lines scripts read.
func osRelease(ubuntu string) string {
	return fmt.Sprintf("NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"%s\"\nPRETTY_NAME=\"Ubuntu %s (jetbake stand-in)\"\n", ubuntu, ubuntu)
}

// applets are the busybox commands linked into /bin: what the Dockerfile's
// RUN lines and the stand-in toolchain's scripts use, and a shell.
var applets = []string{"sh", "echo", "printf", "cat", "mkdir", "chmod", "cp", "ls", "env", "rm", "test", "[", "true",
	"false", "uname", "sleep", "ln", "mv", "grep", "sed", "cut", "tr", "head", "tail", "basename",
	"dirname", "readlink", "find", "touch", "wc", "sort", "id", "stat", "xargs"}

// glibcFiles are the parts of Debian's arm64 libc6 and libc-bin a base
// needs to run dynamically linked programs: the loader (PT_INTERP of every
// aarch64 program is /lib/ld-linux-aarch64.so.1), the libraries most
// programs link, ldconfig (NVIDIA's runtime runs the container's to update
// its ld cache) and ldconfig's configuration.
var glibcFiles = []string{
	"lib/ld-linux-aarch64.so.1",
	"lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
	"lib/aarch64-linux-gnu/libc.so.6",
	"lib/aarch64-linux-gnu/libm.so.6",
	"lib/aarch64-linux-gnu/libpthread.so.0",
	"lib/aarch64-linux-gnu/libdl.so.2",
	"lib/aarch64-linux-gnu/librt.so.1",
	"lib/aarch64-linux-gnu/libresolv.so.2",
	"sbin/ldconfig",
	"etc/ld.so.conf",
	"etc/ld.so.conf.d/aarch64-linux-gnu.conf",
	"etc/ld.so.conf.d/libc.conf",
}

// addGlibc copies glibcFiles from the unpacked packages, links as links.
func (k Kit) addGlibc(l *layer) error {
	for _, name := range glibcFiles {
		src := filepath.Join(k.Glibc, name)
		fi, err := os.Lstat(src)
		if err != nil {
			return fmt.Errorf("Debian's arm64 glibc at %s (run 'make deps' to fetch it): %w", k.Glibc, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			l.link(name, target)
			continue
		}
		if err := l.copyFile(name, int64(fi.Mode().Perm()), src); err != nil {
			return err
		}
	}
	return nil
}

// addCUDA lays out the CUDA tree. With a flavour it is NVIDIA's:
// /usr/local/cuda-X.Y (or CUDARoot) with version.json and the flavour's
// targets folder, lib64 linking to that folder's lib, /usr/local/cuda
// linking to the tree, and in devel bases what builds link against (see
// addCUDADevel). CUDA's shared libraries come with the apt index.
func (k Kit) addCUDA(ctx context.Context, l *layer, b Base) error {
	version := []byte(fmt.Sprintf("{\n  \"cuda\": {\"name\": \"CUDA SDK\", \"version\": %q}\n}\n", b.CUDA))
	if b.Flavour == "" {
		l.file("usr/local/cuda/version.json", 0o644, version)
		return nil
	}
	tree := strings.TrimPrefix(b.cudaTree(), "/")
	lib := b.Flavour.TargetDir() + "/lib"
	l.file(tree+"/version.json", 0o644, version)
	l.dir(tree + "/" + lib)
	l.link(tree+"/lib64", lib)
	if b.CUDARoot == "" {
		l.link("usr/local/cuda", filepath.Base(tree))
	}
	if !b.Devel {
		return nil
	}
	return k.addCUDADevel(ctx, l, b, lib)
}

// cudaTree is the CUDA tree's folder: CUDARoot, else /usr/local/cuda-X.Y.
func (b Base) cudaTree() string {
	if b.CUDARoot != "" {
		return b.CUDARoot
	}
	return "/usr/local/cuda-" + majorMinor(b.CUDA)
}

// majorMinor is "12.6" of "12.6" or "12.6.11".
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// TegraRelease is the first line of /etc/nv_tegra_release for an L4T version such as "36.4.3".
func TegraRelease(l4t string) string {
	parts := strings.SplitN(l4t, ".", 2)
	rev := "0.0"
	if len(parts) == 2 {
		rev = parts[1]
	}
	return fmt.Sprintf("# R%s (release), REVISION: %s, GCID: 00000000, BOARD: generic, EABI: aarch64, DATE: Thu Jan  1 00:00:00 UTC 1970\n", parts[0], rev)
}

// Push pushes the stand-in for b to the registry at host (e.g.
// "127.0.0.1:5000"), under b's repository path without its registry.
func (k Kit) Push(ctx context.Context, host string, b Base, opts ...remote.Option) (string, error) {
	src, err := name.ParseReference(b.Ref)
	if err != nil {
		return "", fmt.Errorf("stand-in %q: %w", b.Ref, err)
	}
	img, err := k.Image(ctx, b)
	if err != nil {
		return "", err
	}
	dst, err := name.ParseReference(host+"/"+src.Context().RepositoryStr()+":"+src.Identifier(), name.Insecure)
	if err != nil {
		return "", err
	}
	opts = append(opts, remote.WithContext(ctx))
	if b.Index {
		platform := b.Platform()
		idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
			mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
		return dst.String(), remote.WriteIndex(dst, idx, opts...)
	}
	return dst.String(), remote.Write(dst, img, opts...)
}
