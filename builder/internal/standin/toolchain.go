package standin

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
)

// The stand-in toolchain's scripts (see toolchain/*.sh).
var (
	//go:embed toolchain/curl.sh
	curlScript []byte
	//go:embed toolchain/rustup-init.sh
	rustupInitScript []byte
	//go:embed toolchain/rustup.sh
	rustupScript []byte
	//go:embed toolchain/install.sh
	installScript []byte
)

// aptIndexFor is the package index of base b: what Dockerfile-jetson's
// apt-get lines install (and a few packages other Dockerfiles ask for),
// those b already has marked installed. Every base can install
// ca-certificates, its Ubuntu's OpenSSL, libssl-dev, curl, pkg-config,
// build-essential and the CUDA libraries of its CUDA release.
func (k Kit) aptIndexFor(ctx context.Context, b Base) (*aptIndex, error) {
	x := &aptIndex{pkgs: map[string]*aptPackage{}}
	lib := "usr/lib/aarch64-linux-gnu/"
	has := func(soname string) bool { return contains(b.Libs, soname) }

	x.add(&aptPackage{name: "ca-certificates", installed: b.CABundle,
		files: map[string][]byte{strings.TrimPrefix(CABundlePath, "/"): []byte("# stand-in CA bundle\n")}})
	if b.Cross {
		if err := k.crossSSL(ctx, x, b); err != nil {
			return nil, err
		}
	} else {
		ssl := &aptPackage{name: sslPackage(b.Ubuntu), files: map[string][]byte{}, installed: has(SSLSoname(b.Ubuntu))}
		for _, so := range []string{SSLSoname(b.Ubuntu), CryptoSoname(b.Ubuntu)} {
			data, err := k.sharedObject(ctx, so)
			if err != nil {
				return nil, err
			}
			ssl.files[lib+so] = data
		}
		x.add(ssl)
		x.add(&aptPackage{name: "libssl-dev", deps: []string{ssl.name},
			files: map[string][]byte{"usr/include/openssl/ssl.h": []byte("/* stand-in */\n"),
				lib + "pkgconfig/openssl.pc": []byte("Name: OpenSSL\nDescription: jetbake stand-in\nVersion: 3.0.2\n")},
			links: map[string]string{lib + "libssl.so": SSLSoname(b.Ubuntu), lib + "libcrypto.so": CryptoSoname(b.Ubuntu)}})
	}
	// A cross build base has curl and pkg-config: its toolchain stage
	// installs nothing.
	x.add(&aptPackage{name: "curl", files: map[string][]byte{"usr/bin/curl": curlScript}, installed: b.Cross})
	pkgConfig := tool("pkg-config", "pkg-config")
	pkgConfig.installed = b.Cross
	x.add(pkgConfig)
	if b.RealNvcc() && !b.Cross {
		// Debian's real GCC 11 (realnvcc.go), installed.
		x.add(&aptPackage{name: "build-essential", installed: true, links: gccLinks,
			files: map[string][]byte{"usr/bin/make": toolScript}})
	} else {
		x.add(tool("build-essential", "cc", "gcc", "make"))
	}
	x.add(tool("git", "git"))
	x.add(tool("protobuf-compiler", "protoc"))
	x.add(tool("unzip", "unzip"))
	if b.CUDA == "" || b.Flavour == "" {
		return x, nil
	}
	dir := strings.TrimPrefix(b.cudaTree(), "/") + "/" + b.Flavour.TargetDir() + "/lib/"
	for _, cl := range cudaLibs(b.CUDA) {
		name := cl.Package + cudaPackageSuffix(b.CUDA)
		p := x.pkgs[name]
		if p == nil {
			p = &aptPackage{name: name, installed: b.CUDALibs || b.Devel, files: map[string][]byte{}}
			x.add(p)
		}
		data, err := k.cudaLibrary(ctx, cl, b.CUDA)
		if err != nil {
			return nil, err
		}
		p.files[dir+cl.Soname] = data
	}
	return x, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sharedObject is an empty aarch64 shared object with soname.
func (k Kit) sharedObject(ctx context.Context, soname string) ([]byte, error) {
	path, err := BuildSharedObject(ctx, k.Cache, ARM64, soname)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// cudaLibrary is the stand-in of one of CUDA's libraries of release cuda,
// with the release's kernels when the real one ships some.
func (k Kit) cudaLibrary(ctx context.Context, cl cudaLib, cuda string) ([]byte, error) {
	if !cl.Kernels {
		return k.sharedObject(ctx, cl.Soname)
	}
	code, err := LibraryKernels(cuda)
	if err != nil {
		return nil, err
	}
	path, err := BuildCUDALibrary(ctx, k.Cache, ARM64, cl.Soname, append([][]fatbintest.Code{code}, perGPUModules(cl.Soname, cuda)...)...)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// addToolchain adds the stand-in Rust toolchain of a build base: the
// installer that curl serves for https://sh.rustup.rs, the rustup stand-in,
// the stand-in cargo (which is rustc too), the stand-in sccache that
// `cargo install sccache` installs, and the router templates the
// stand-in cargo turns into target/release/text-embeddings-router, one per
// linking mode, each linked as TEI's router is against this base's
// libraries (its OpenSSL, its CUDA major).
func (k Kit) addToolchain(ctx context.Context, l *layer, b Base) error {
	share := strings.TrimPrefix(tei.StandinDir, "/")
	l.file(share+"/rustup/rustup-init.sh", 0o755, rustupInitScript)
	l.file(share+"/rustup/rustup", 0o755, rustupScript)
	for _, name := range []string{"cargo", "sccache"} {
		prog, err := k.buildGo(ctx, goProgram{Pkg: "./" + teiPackage + "/cmd/" + name, Name: name, Arch: b.toolArch()})
		if err != nil {
			return err
		}
		if err := l.copyFile(share+"/cargo/"+name, 0o755, prog); err != nil {
			return err
		}
	}
	main, err := BuildRustcObject(ctx, k.Cache)
	if err != nil {
		return err
	}
	if err := l.copyFile(strings.TrimPrefix(tei.MainObjectPath(), "/"), 0o644, main); err != nil {
		return err
	}
	// NVIDIA's real fat binaries of candle-flash-attn's kernels for the
	// SMs CUDA 11.8 targets, which the stand-in cargo puts into the router
	// for CUDA_COMPUTE_CAP 72 and 87 (tei.SetKernels).
	for _, sm := range []int{72, 87} {
		real, err := k.fatbins(ctx, []Module{Real(nvreal.FlashAttn(sm))})
		if err != nil {
			return err
		}
		l.file(strings.TrimPrefix(tei.FlashFatbinPath(sm), "/"), 0o644, real[0])
	}
	for _, kind := range tei.Templates() {
		path, err := k.routerTemplate(ctx, b, kind)
		if err != nil {
			return err
		}
		if err := l.copyFile(strings.TrimPrefix(tei.TemplatePath(kind.Name()), "/"), 0o755, path); err != nil {
			return err
		}
	}
	return nil
}

// toolArch is the architecture of the toolchain's programs: the build
// machine's in a cross build base, else the Jetson's.
func (b Base) toolArch() Arch {
	if b.Cross {
		return AMD64
	}
	return ARM64
}

// RouterNeeds are the libraries a router built on a base of ubuntu and
// cuda records as DT_NEEDED, besides the C library: the driver (every
// CUDA linking mode); CUDA's shared libraries with dynamic linking; with
// flash attention (candle-cuda) libcudart of the CUDA major, which
// candle-flash-attn's build script links dynamically
// (cargo:rustc-link-lib=dylib=cudart, candle revision 6381023, which TEI
// v1.8.0 to v1.9.3 pin) in every linking mode; OpenSSL, the GCC and C++
// runtimes (libstdc++: the same build script's dylib=stdc++, and CUDA's
// static libraries).
func RouterNeeds(ubuntu, cuda string, kind tei.TemplateKind) []string {
	var out []string
	if kind.Linking != "" {
		out = append(out, "libcuda.so.1")
	}
	switch {
	case kind.Linking == tei.LinkDynamic:
		out = append(out, CUDASonames(cuda)...)
	case kind.FlashAttn:
		out = append(out, cudaLibs(cuda)[0].Soname)
	}
	return append(out, UbuntuLibs(ubuntu)...)
}

// routerTemplate builds the stand-in router of kind for b, with the GPU
// code of routerKernels linked in.
func (k Kit) routerTemplate(ctx context.Context, b Base, kind tei.TemplateKind) (string, error) {
	var links []string
	for _, so := range RouterNeeds(b.Ubuntu, b.CUDA, kind) {
		var path string
		var err error
		if so == "libcuda.so.1" {
			path, err = BuildLibcuda(ctx, k.Cache, Driver{Arch: ARM64, Stub: true})
		} else {
			path, err = BuildSharedObject(ctx, k.Cache, ARM64, so)
		}
		if err != nil {
			return "", err
		}
		links = append(links, path)
	}
	kernels, err := routerKernels(b.CUDA, kind)
	if err != nil {
		return "", err
	}
	var objects []string
	if len(kernels) > 0 {
		obj, err := buildKernelObject(ctx, k.Cache, ARM64, kernels)
		if err != nil {
			return "", err
		}
		objects = append(objects, obj)
	}
	// netgo: the serving router's HTTP server resolves nothing, and Go's
	// cgo resolver would add libresolv.so.2 to its DT_NEEDED, which TEI's
	// router does not have.
	prog := goProgram{Pkg: "./" + teiPackage + "/cmd/router", Name: "router-" + kind.Name(), CgoLinks: links, Objects: objects, Cgo: true,
		Tags: []string{"netgo"}}
	if kind.Linking != "" {
		prog.Tags = append(prog.Tags, "cuda")
	}
	path, err := k.buildGo(ctx, prog)
	if err != nil {
		return "", fmt.Errorf("stand-in router for %s: %w", filepath.Base(prog.Name), err)
	}
	return path, nil
}

// addCUDADevel adds what a CUDA devel image links against: cuda.h, the
// static libraries of static linking, the development links of dynamic
// linking, nvcc (bin/nvcc, see nvccScript) and the driver's stub,
// stubs/libcuda.so (soname libcuda.so.1).
func (k Kit) addCUDADevel(ctx context.Context, l *layer, b Base, lib string) error {
	tree := strings.TrimPrefix(b.cudaTree(), "/")
	l.file(tree+"/include/cuda.h", 0o644, []byte("/* stand-in for CUDA's driver API header */\n"))
	for _, a := range []string{"libcudart_static.a", "libcublas_static.a", "libcublasLt_static.a", "libcurand_static.a", "libculibos.a"} {
		l.file(tree+"/"+lib+"/"+a, 0o644, []byte("!<arch>\n"))
	}
	for _, so := range CUDASonames(b.CUDA) {
		l.link(tree+"/"+lib+"/"+devLink(so), so)
	}
	hostDir := strings.TrimPrefix(b.Flavour.TargetDir(), "targets/")
	if b.Cross {
		// An x86_64 toolkit beside the target's files (cuda-cross-<arch>-X-Y).
		hostDir = "x86_64-linux"
	}
	if b.RealNvcc() {
		// NVIDIA's nvcc 11.8 (realnvcc.go), run from its own folder:
		// nvcc reads its profile from the folder it was started from, a
		// link's (found "cuda_runtime.h: No such file or directory"),
		// so this is a script that runs it, as Debian's /usr/bin/nvcc is.
		l.file(tree+"/bin/nvcc", 0o755, []byte("#!/bin/sh\nexec /"+realNvccTree+"/bin/nvcc \"$@\"\n"))
	} else {
		nvcc, err := nvccScript(b.CUDA, hostDir)
		if err != nil {
			return err
		}
		l.file(tree+"/bin/nvcc", 0o755, nvcc)
	}
	stub, err := BuildLibcuda(ctx, k.Cache, Driver{Arch: ARM64, Stub: true})
	if err != nil {
		return err
	}
	return l.copyFile(tree+"/"+lib+"/stubs/libcuda.so", 0o644, stub)
}
