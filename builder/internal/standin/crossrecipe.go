package standin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/jetbake/jetbake/builder/internal/aptrepo"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/computecap"
)

// What the test bed builds the recipe of a cross build base
// (dockerfiles/Dockerfile-cross-base) from, the same lines a user's build
// runs (recipebed.go serves it):
//   - a stand-in of NVIDIA's amd64 nvidia/cuda devel image: a real Debian
//     root (`make deps`: mmdebstrap --variant=apt; Debian 12 for Ubuntu
//     22.04, Debian 13 for 24.04), the x86_64 nvcc where NVIDIA's image has
//     it (NVIDIA's real nvcc 11.8 for the CUDA 12 Tegra rows, laid out as
//     realnvcc.go lays it out, without targets/aarch64-linux; the x86_64
//     stand-in nvcc for CUDA 13), NVIDIA's apt source for its x86_64
//     repository and cuda-keyring's and ubuntu-keyring's keyrings (the test
//     keys'), and the ENV NVIDIA's base and devel Dockerfiles set;
//   - NVIDIA's cross packages as .debs (cuda-cross-<arch>-X-Y, Architecture
//     all, depending on per-library packages) holding targets/<arch>-linux;
//   - a stand-in curl package (the recipe's `curl`): the stand-in curl,
//     which answers https://sh.rustup.rs, and the stand-in toolchain the
//     toolchain-cross stage's rustup and cargo fetch, where a real build
//     reaches the internet.

// recipeRelease is one release's recipe arguments, read.
type recipeRelease struct {
	develTag     string // "12.6.3-devel-ubuntu22.04"
	cuda         string // "12.6.3"
	ubuntu       string // "22.04"
	codename     string // "jammy"
	crossPackage string // "cuda-cross-aarch64-12-6"
	crossArch    string // "aarch64" or "sbsa"
	gcc          string // "11"
}

// parseRecipeArgs reads the recipe's arguments of a release (the table of
// facts' RecipeArgs): CUDA_DEVEL_IMAGE (required), CUDA_CROSS_PACKAGE,
// UBUNTU_CODENAME and CROSS_GCC (the recipe's defaults when absent).
func parseRecipeArgs(args map[string]string) (recipeRelease, error) {
	get := func(k, def string) string {
		if v := args[k]; v != "" {
			return v
		}
		return def
	}
	image := args["CUDA_DEVEL_IMAGE"]
	i := strings.LastIndex(image, ":")
	if i < 0 {
		return recipeRelease{}, fmt.Errorf("CUDA_DEVEL_IMAGE %q has no tag: name an nvidia/cuda devel image, e.g. nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04", image)
	}
	tag := image[i+1:]
	cuda, ubuntu, ok := strings.Cut(tag, "-devel-ubuntu")
	if !ok || cuda == "" || ubuntu == "" {
		return recipeRelease{}, fmt.Errorf("CUDA_DEVEL_IMAGE %q is not an nvidia/cuda devel image (a tag such as 12.6.3-devel-ubuntu22.04)", image)
	}
	r := recipeRelease{develTag: tag, cuda: cuda, ubuntu: ubuntu, codename: get("UBUNTU_CODENAME", "jammy"),
		crossPackage: get("CUDA_CROSS_PACKAGE", "cuda-cross-aarch64-12-6"), gcc: get("CROSS_GCC", "11")}
	rest, ok := strings.CutPrefix(r.crossPackage, "cuda-cross-")
	arch, _, _ := strings.Cut(rest, "-")
	if !ok || (arch != "aarch64" && arch != "sbsa") {
		return recipeRelease{}, fmt.Errorf("CUDA_CROSS_PACKAGE %q is not an NVIDIA cross package (cuda-cross-aarch64-X-Y or cuda-cross-sbsa-X-Y)", r.crossPackage)
	}
	r.crossArch = arch
	return r, nil
}

// flavour is the CUDA build the cross package targets.
func (r recipeRelease) flavour() computecap.Flavour {
	if r.crossArch == "sbsa" {
		return computecap.FlavourSBSA
	}
	return computecap.FlavourTegra
}

// base is the stand-in cross build base the recipe makes of r, whose CUDA
// tree, toolchain and router templates the test bed's packages carry.
func (r recipeRelease) base() Base {
	return Base{CUDA: majorMinor(r.cuda), Flavour: r.flavour(), Devel: true, CUDALibs: true, Ubuntu: r.ubuntu,
		CABundle: true, Cross: true}
}

// recipeDeps is the folder `make deps` fetched the Debian root and the
// packages of Ubuntu codename's stand-in into (deps-recipe.sh).
func (k Kit) recipeDeps(codename string) (string, error) {
	dir := filepath.Join(k.Source, "bin", "deps", "recipe-"+codename)
	if _, err := os.Stat(filepath.Join(dir, "root.tar.gz")); err != nil {
		return "", fmt.Errorf("the test bed has no stand-in for Ubuntu %s's archive at %s (run 'make deps' as root: it fetches recipe-jammy and recipe-noble): %w", codename, dir, err)
	}
	return dir, nil
}

// develImage is the stand-in of NVIDIA's nvidia/cuda devel image of r:
// the Debian root, NVIDIA's nvcc 11.8 (Tegra) and the image's own files.
func (k Kit) develImage(r recipeRelease, keys recipeKeys) (v1.Image, error) {
	deps, err := k.recipeDeps(r.codename)
	if err != nil {
		return nil, err
	}
	root, err := tarball.LayerFromFile(filepath.Join(deps, "root.tar.gz"))
	if err != nil {
		return nil, fmt.Errorf("stand-in devel image: %w", err)
	}
	layers := []v1.Layer{root}
	b := r.base()
	if b.RealNvcc() {
		nvcc, err := k.realNvccLayer(AMD64, false)
		if err != nil {
			return nil, err
		}
		layers = append(layers, nvcc)
	}
	own, err := develFiles(r, keys)
	if err != nil {
		return nil, err
	}
	l, err := own.build()
	if err != nil {
		return nil, err
	}
	img, cf, err := ociImage(append(layers, l), v1.Platform{OS: "linux", Architecture: "amd64"})
	if err != nil {
		return nil, err
	}
	cf.Config.Env = develEnv(r)
	cf.Config.Cmd = []string{"/bin/bash"}
	cf.Config.Labels = map[string]string{"maintainer": "NVIDIA CORPORATION <cudatools@nvidia.com>",
		"io.jetbake.standin": "nvcr.io/nvidia/cuda:" + r.develTag}
	return mutate.ConfigFile(img, cf)
}

// develEnv is the ENV of NVIDIA's base and devel Dockerfiles for
// nvidia/cuda (gitlab.com/nvidia/container-images/cuda, dist/<CUDA>/
// ubuntu<Y>/{base,devel}/Dockerfile): NVARCH, the CUDA version, PATH with
// /usr/local/nvidia/bin and /usr/local/cuda/bin first, the library path of
// NVIDIA's runtime, the container runtime's variables and the driver stub's
// LIBRARY_PATH. NVIDIA_REQUIRE_CUDA's driver brands are left out.
func develEnv(r recipeRelease) []string {
	return []string{
		"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"NVARCH=x86_64", "NVIDIA_REQUIRE_CUDA=cuda>=" + majorMinor(r.cuda), "CUDA_VERSION=" + r.cuda,
		"LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
		"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
		"LIBRARY_PATH=/usr/local/cuda/lib64/stubs",
	}
}

// develFiles are the devel image's own files over the Debian root: the
// x86_64 CUDA tree (version.json, bin/nvcc, targets/x86_64-linux with
// cuda.h, lib64 and include linking into it) and /usr/local/cuda; the
// keyrings the recipe's signed-by names (the test keys'); NVIDIA's apt
// source for its x86_64 repository, which cuda-keyring writes and the
// recipe removes; NVIDIA's ld.so.conf.d/nvidia.conf.
func develFiles(r recipeRelease, keys recipeKeys) (*layer, error) {
	l := newLayer()
	mm := majorMinor(r.cuda)
	tree := "usr/local/cuda-" + mm
	l.file(tree+"/version.json", 0o644, []byte(fmt.Sprintf("{\n  \"cuda\": {\"name\": \"CUDA SDK\", \"version\": %q}\n}\n", r.cuda)))
	l.file(tree+"/targets/x86_64-linux/include/cuda.h", 0o644, []byte("/* stand-in for CUDA's driver API header */\n"))
	l.dir(tree + "/targets/x86_64-linux/lib/stubs")
	l.link(tree+"/include", "targets/x86_64-linux/include")
	l.link(tree+"/lib64", "targets/x86_64-linux/lib")
	l.link("usr/local/cuda", "cuda-"+mm)
	if r.base().RealNvcc() {
		// NVIDIA's nvcc 11.8 reads its profile from its own folder, and
		// finds the target's files under its own targets/aarch64-linux:
		// the cross package's, once installed (a dangling link before).
		l.file(tree+"/bin/nvcc", 0o755, []byte("#!/bin/sh\nexec /"+realNvccTree+"/bin/nvcc \"$@\"\n"))
		l.link(realNvccTree+"/targets/aarch64-linux", "../../cuda-"+mm+"/targets/aarch64-linux")
	} else {
		nvcc, err := nvccScript(mm, "x86_64-linux")
		if err != nil {
			return nil, err
		}
		l.file(tree+"/bin/nvcc", 0o755, nvcc)
	}
	l.file("usr/share/keyrings/ubuntu-archive-keyring.gpg", 0o644, keys.ubuntuRing)
	l.file("usr/share/keyrings/cuda-archive-keyring.gpg", 0o644, keys.cudaRing)
	repo := "ubuntu" + strings.ReplaceAll(r.ubuntu, ".", "")
	l.file("etc/apt/sources.list.d/cuda-"+repo+"-x86_64.list", 0o644,
		[]byte("deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/"+repo+"/x86_64/ /\n"))
	l.file("etc/ld.so.conf.d/nvidia.conf", 0o644, []byte("/usr/local/nvidia/lib\n/usr/local/nvidia/lib64\n"))
	return l, nil
}

// debPackage is one package the test bed builds: its control and files.
type debPackage struct {
	ctl   aptrepo.Control
	files *layer
}

// crossPackages are NVIDIA's cross packages of r as the test bed builds
// them: per-library packages (cuda-cudart-cross-<arch>-X-Y with the
// headers, the CUDA runtime's static archives and the driver stub;
// libcublas-, libcurand- and cuda-nvrtc-cross-<arch>-X-Y with theirs),
// Architecture all, each installing its part of
// /usr/local/cuda-X.Y/targets/<arch>-linux, and r's cross package, a meta
// package depending on them. The files are the stand-in cross base's (its
// aarch64 stand-ins) with, for Tegra, NVIDIA's real CUDA 11.8 headers and
// static runtime (realnvcc.go).
func (k Kit) crossPackages(ctx context.Context, r recipeRelease) ([]debPackage, error) {
	b := r.base()
	all := newLayer()
	if err := k.addCUDA(ctx, all, b); err != nil {
		return nil, err
	}
	prefix := strings.TrimPrefix(b.cudaTree(), "/") + "/" + b.Flavour.TargetDir() + "/"
	for _, cl := range cudaLibs(b.CUDA) {
		data, err := k.cudaLibrary(ctx, cl, b.CUDA)
		if err != nil {
			return nil, err
		}
		all.file(prefix+"lib/"+cl.Soname, 0o644, data)
	}
	if b.RealNvcc() {
		p, err := nvreal.Find(k.Source)
		if err != nil {
			return nil, fmt.Errorf("NVIDIA's cross package with NVIDIA's CUDA 11.8 target files: %w", err)
		}
		if err := addRealNvccTarget(all, p, prefix); err != nil {
			return nil, err
		}
	}
	suffix := strings.TrimPrefix(r.crossPackage, "cuda-cross-"+r.crossArch)
	version := r.cuda + "-1"
	parts := map[string]*layer{}
	for name, hdr := range all.entries {
		if !strings.HasPrefix(name, prefix) || hdr.Typeflag == '5' {
			continue
		}
		pkg := crossPart(path.Base(name)) + "-cross-" + r.crossArch + suffix
		if parts[pkg] == nil {
			parts[pkg] = newLayer()
		}
		parts[pkg].entries[name] = hdr
		if data, ok := all.data[name]; ok {
			parts[pkg].data[name] = data
		}
		parts[pkg].dir(path.Dir(name))
	}
	var out []debPackage
	var deps []string
	for _, pkg := range sortedLayers(parts) {
		deps = append(deps, pkg+" (= "+version+")")
		out = append(out, debPackage{ctl: nvidiaControl(pkg, version, "", "CUDA "+r.cuda+" cross "+r.crossArch+" files of "+pkg), files: parts[pkg]})
	}
	meta := newLayer()
	meta.file("usr/share/doc/"+r.crossPackage+"/jetbake-standin", 0o644, nil)
	out = append(out, debPackage{ctl: nvidiaControl(r.crossPackage, version, strings.Join(deps, ", "),
		"CUDA "+r.cuda+" cross-compilation packages for "+r.crossArch+" (meta package)"), files: meta})
	return out, nil
}

// crossPart is the per-library package a target file belongs to.
func crossPart(base string) string {
	switch {
	case strings.Contains(base, "cublas"):
		return "libcublas"
	case strings.Contains(base, "curand"):
		return "libcurand"
	case strings.Contains(base, "nvrtc"):
		return "cuda-nvrtc"
	}
	return "cuda-cudart"
}

// nvidiaControl is the control of one of NVIDIA's cross packages.
func nvidiaControl(name, version, depends, desc string) aptrepo.Control {
	ctl := aptrepo.Control{{"Package", name}, {"Version", version}, {"Architecture", "all"},
		{"Maintainer", "cudatools <cudatools@nvidia.com> (jetbake test bed stand-in)"}, {"Section", "devel"}, {"Priority", "optional"}}
	if depends != "" {
		ctl = append(ctl, [2]string{"Depends", depends})
	}
	return append(ctl, [2]string{"Description", desc})
}

// curlPackage is the test bed's curl for r's archive: the stand-in curl,
// which answers https://sh.rustup.rs with the stand-in rustup installer,
// and the stand-in toolchain that installer, rustup and cargo fetch (a real
// build fetches them from the internet): rustup, cargo, sccache and the
// router templates of r's Ubuntu and CUDA.
func (k Kit) curlPackage(ctx context.Context, r recipeRelease) (debPackage, error) {
	l := newLayer()
	l.file("usr/bin/curl", 0o755, curlScript)
	if err := k.addToolchain(ctx, l, r.base()); err != nil {
		return debPackage{}, err
	}
	ctl := aptrepo.Control{{"Package", "curl"}, {"Version", "0+jetbake1"}, {"Architecture", "amd64"},
		{"Maintainer", "jetbake test bed <testbed@jetbake.invalid>"}, {"Section", "web"}, {"Priority", "optional"},
		{"Description", "jetbake stand-in for curl: answers https://sh.rustup.rs with the stand-in Rust toolchain's installer"}}
	return debPackage{ctl: ctl, files: l}, nil
}

// buildDeb builds p's .deb into k.Cache (recipe-debs/), once per content.
func (k Kit) buildDeb(ctx context.Context, p debPackage) (string, error) {
	data, err := p.files.tar()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range p.ctl {
		fmt.Fprintf(h, "%s: %s\n", f[0], f[1])
	}
	h.Write(data)
	out := filepath.Join(k.Cache, "recipe-debs", p.ctl[0][1]+"_"+hex.EncodeToString(h.Sum(nil)[:10])+".deb")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tree, err := os.MkdirTemp(k.Cache, "deb-tree-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tree)
	if err := p.files.writeTree(tree); err != nil {
		return "", err
	}
	tmp := out + ".tmp"
	if err := aptrepo.BuildDeb(ctx, tmp, tree, p.ctl); err != nil {
		return "", err
	}
	return out, os.Rename(tmp, out)
}

// writeTree writes the layer's entries under dir.
func (l *layer) writeTree(dir string) error {
	for _, name := range sortedKeys(l.entries) {
		hdr := l.entries[name]
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		var err error
		switch hdr.Typeflag {
		case '5':
			err = os.MkdirAll(dst, 0o755)
		case '2':
			err = os.Symlink(hdr.Linkname, dst)
		default:
			err = os.WriteFile(dst, l.data[name], os.FileMode(hdr.Mode).Perm())
			if err == nil {
				err = os.Chmod(dst, os.FileMode(hdr.Mode).Perm())
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedLayers(m map[string]*layer) []string { return sortedKeys(m) }
