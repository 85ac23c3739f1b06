package standin

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

// The stand-in cross build bases: amd64 images holding what a real cross
// build base holds (Dockerfile-jetson's toolchain-cross stage,
// docs/matrix.md#cross-builds): Debian's real aarch64 cross compiler,
// gcc-aarch64-linux-gnu with its binutils and libc6-dev-arm64-cross, as
// x86_64 programs with their amd64 shared libraries and busybox for the
// shell (Kit.Cross, from `make deps`); the stand-in cargo and sccache built
// for amd64; curl and rustup's installer; an x86_64 stand-in nvcc of the
// release whose host object goes through the compiler it is given; the CUDA
// tree with the target's folder (targets/aarch64-linux or
// targets/sbsa-linux) holding the target's static libraries, driver stub
// and CUDA runtime as aarch64 stand-ins, as NVIDIA's cuda-cross-<arch>-X-Y
// installs them; the target's OpenSSL as libssl-dev:arm64 installs it
// (aarch64 objects under /usr/lib/aarch64-linux-gnu, with pkgconfig); and
// the router templates of the release's Ubuntu and CUDA, aarch64 routers as
// on the native build base.

// CrossBaseRef is where the test bed pushes the stand-in cross build base of a release: REGISTRY/jetbake/cross-build-base:cuda<CUDA>-<targetdir>-ubuntu<UBUNTU>
func CrossBaseRef(registry string, rel plan.Release) string {
	return fmt.Sprintf("%s/jetbake/cross-build-base:cuda%s-%s-ubuntu%s", registry, rel.CUDA, crossDirOf(rel), rel.Ubuntu)
}

// crossDirOf is the targets/ folder of the facts table's cross row for the
// release's CUDA flavour: "aarch64-linux" or "sbsa-linux"; "" when unknown.
func crossDirOf(rel plan.Release) string {
	t := computecap.DefaultTable()
	f := flavourOf(rel.L4T)
	if f == "" {
		f, _ = t.FlavourOfJetPack(rel.JetPack)
	}
	row, ok := t.CrossTargetOf(f)
	if !ok {
		return ""
	}
	return row.Dir
}

// AddCrossBases gives every release of a decoded router matrix.json a
// cross_build_base: the stand-in of CrossBaseRef in registry, linux/amd64,
// the release's CUDA and its line's targets/ folder, as `jetbake validate`
// wants it. An app matrix (its stages run on framework containers) is left
// as it is.
func AddCrossBases(m map[string]any, registry string) error {
	if _, app := m["app"]; app {
		return nil
	}
	releases, ok := m["releases"].([]any)
	if !ok {
		return fmt.Errorf("matrix: releases is %T, not a list", m["releases"])
	}
	for i, r := range releases {
		rel, ok := r.(map[string]any)
		if !ok {
			return fmt.Errorf("matrix: releases[%d] is %T, not an object", i, r)
		}
		str := func(k string) string { s, _ := rel[k].(string); return s }
		p := plan.Release{Name: str("name"), JetPack: str("jetpack"), L4T: str("l4t"), CUDA: str("cuda"), Ubuntu: str("ubuntu")}
		dir := crossDirOf(p)
		if dir == "" {
			return fmt.Errorf("matrix: releases[%d] (%s): the facts table has no cross row for JetPack %q", i, p.Name, p.JetPack)
		}
		rel["cross_build_base"] = map[string]any{"image": CrossBaseRef(registry, p), "platform": "linux/amd64",
			"cuda": p.CUDA, "cuda_target": dir}
	}
	return nil
}

// crossBase is the stand-in cross build base of rel, at ref.
func crossBase(ref string, rel plan.Release) Base {
	return Base{Ref: ref, CUDA: rel.CUDA, Flavour: flavourOf(rel.L4T), Devel: true, CUDALibs: true, Ubuntu: rel.Ubuntu,
		CABundle: true, Cross: true}
}

// crossSkip says whether the cross compiler's tree leaves out a file: what
// a build never runs (LTO, gold, the sanitizers' archives, the static C
// and C++ libraries, the amd64 binutils' own libbfd), documentation and locales,
// so that the image stays small.
func crossSkip(name string) bool {
	base := path.Base(name)
	switch {
	case strings.HasPrefix(name, "usr/share/"), strings.Contains(name, "/gconv/"):
		return true
	case base == "lto1", strings.Contains(base, "lto-dump"), strings.HasSuffix(base, "ld.gold"),
		strings.HasSuffix(base, "-dwp"), strings.HasSuffix(base, "-gprof"):
		return true
	case strings.HasSuffix(base, "san.a"), strings.HasSuffix(base, "san_preinit.o"), base == "libstdc++.a", base == "libstdc++fs.a":
		return true
	case strings.HasPrefix(name, "usr/aarch64-linux-gnu/lib/") && strings.HasSuffix(base, ".a") && !strings.Contains(base, "nonshared"):
		return true
	case strings.Contains(base, "-system.so"):
		return true
	}
	return false
}

// addCrossTree copies Debian's unpacked amd64 packages (Kit.Cross) into l,
// links as links, less what crossSkip leaves out.
func (k Kit) addCrossTree(l *layer) error {
	if _, err := os.Stat(filepath.Join(k.Cross, "usr/bin/aarch64-linux-gnu-g++-11")); err != nil {
		return fmt.Errorf("Debian's amd64 aarch64 cross compiler (GCC 11) at %s (run 'make deps' to fetch it): %w", k.Cross, err)
	}
	return copyTree(l, "", k.Cross, crossSkip)
}

// crossTreeLayer is the first layer of every stand-in cross build base:
// Debian's cross compiler, its amd64 libraries and busybox with its
// applets.
func (k Kit) crossTreeLayer() (v1.Layer, error) {
	l := newLayer()
	if err := k.addCrossTree(l); err != nil {
		return nil, err
	}
	for _, a := range applets {
		l.link("bin/"+a, "busybox")
	}
	return k.cachedLayer("cross-tree", l)
}

// cachedLayer is l as a layer whose compressed tar is kept in k.Cache
// under name and its content's digest: compressing a large layer is most
// of the time a cross base takes, so the cross bases of a plan, and later
// runs, share it, in the registry too.
func (k Kit) cachedLayer(name string, l *layer) (v1.Layer, error) {
	data, err := l.tar()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	path := filepath.Join(k.Cache, name+"-"+hex.EncodeToString(sum[:10])+".tar.gz")
	if _, err := os.Stat(path); err != nil {
		if err := writeGzip(path, data); err != nil {
			return nil, fmt.Errorf("stand-in cross base: %w", err)
		}
	}
	return tarball.LayerFromFile(path)
}

// writeGzip writes data gzipped at path, through a temporary file.
func writeGzip(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	zw := gzip.NewWriter(tmp)
	if _, err := zw.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// crossRootLayer is the layer of a stand-in cross build base above
// crossTreeLayer: its CUDA tree, OpenSSL, packages and toolchain.
func (k Kit) crossRootLayer(ctx context.Context, b Base) (*layer, error) {
	l := newLayer()
	for _, d := range []string{"etc/ssl/certs", "tmp", "usr/lib/aarch64-linux-gnu", "usr/local/bin"} {
		l.dir(d)
	}
	l.file("usr/bin/install", 0o755, installScript)
	if err := k.addCUDA(ctx, l, b); err != nil {
		return nil, err
	}
	if b.Ubuntu != "" {
		l.file("etc/os-release", 0o644, []byte(osRelease(b.Ubuntu)))
	}
	x, err := k.aptIndexFor(ctx, b)
	if err != nil {
		return nil, err
	}
	l.addApt(x)
	if err := k.addToolchain(ctx, l, b); err != nil {
		return nil, err
	}
	return l, nil
}

// crossSSL adds the cross base's OpenSSL packages to x: the target's,
// libssl3:arm64 and libssl-dev:arm64 (aarch64 objects and their pkgconfig
// under /usr/lib/aarch64-linux-gnu), installed; and the build machine's,
// libssl3 and libssl-dev (x86_64 objects under /usr/lib/x86_64-linux-gnu),
// installed instead with HostSSL: the wrong-architecture row.
func (k Kit) crossSSL(ctx context.Context, x *aptIndex, b Base) error {
	for _, arch := range []Arch{ARM64, AMD64} {
		triple, suffix := "aarch64-linux-gnu", ":arm64"
		if arch == AMD64 {
			triple, suffix = "x86_64-linux-gnu", ""
		}
		installed := (arch == AMD64) == b.HostSSL
		lib := "usr/lib/" + triple + "/"
		ssl := &aptPackage{name: sslPackage(b.Ubuntu) + suffix, files: map[string][]byte{}, installed: installed}
		for _, so := range []string{SSLSoname(b.Ubuntu), CryptoSoname(b.Ubuntu)} {
			p, err := BuildSharedObject(ctx, k.Cache, arch, so)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			ssl.files[lib+so] = data
		}
		x.add(ssl)
		x.add(&aptPackage{name: "libssl-dev" + suffix, deps: []string{ssl.name}, installed: installed,
			files: map[string][]byte{"usr/include/openssl/ssl.h": []byte("/* stand-in */\n"),
				lib + "pkgconfig/openssl.pc": []byte(opensslPC(triple))},
			links: map[string]string{lib + "libssl.so": SSLSoname(b.Ubuntu), lib + "libcrypto.so": CryptoSoname(b.Ubuntu)}})
	}
	return nil
}

// opensslPC is libssl-dev's openssl.pc for a multiarch triple.
func opensslPC(triple string) string {
	return "prefix=/usr\nlibdir=${prefix}/lib/" + triple + "\nincludedir=${prefix}/include\n\n" +
		"Name: OpenSSL\nDescription: Secure Sockets Layer and cryptography libraries and tools (jetbake stand-in)\n" +
		"Version: 3.0.2\nRequires: libssl libcrypto\nLibs: -L${libdir} -lssl -lcrypto\n"
}
