package standin

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/computecap"
)

// NVIDIA's real nvcc in the stand-in cross build bases. Debian carries
// NVIDIA's CUDA 11.8 toolkit (`make deps` fetches it, package nvreal),
// which targets the Jetsons of JetPack 5 and 6 (sm_72, sm_87) and not
// Thor's sm_110, which needs CUDA 13. So the cross bases whose target is
// targets/aarch64-linux (the Tegra releases) carry it, laid out as
// NVIDIA's installer lays out a toolkit with its cross package
// (cuda-cross-aarch64-11-8): /usr/local/cuda-11.8 with bin/ (nvcc,
// nvcc.profile, ptxas, fatbinary, cudafe++, bin2c, crt/), nvvm/bin/cicc,
// nvvm/libdevice and targets/aarch64-linux/{include,lib}; the release's
// CUDA tree's bin/nvcc links to it. Its --version, --list-gpu-code, its
// device code and its refusals are NVIDIA's own. nvlink (only -rdc and
// -dlink need it), cuobjdump and nvdisasm are left out. The cross bases of
// SBSA releases (JetPack 7, CUDA 13) keep the stand-in nvcc (nvcc.go).

// realNvccTree is where the stand-in cross bases keep NVIDIA's CUDA 11.8
// toolkit.
const realNvccTree = "usr/local/cuda-11.8"

// RealNvccVersion is the CUDA release of the real nvcc the stand-in cross
// bases of Tegra releases carry.
const RealNvccVersion = "11.8"

// nvccProfile is nvcc.profile as NVIDIA's toolkit has it: nvcc reads it
// from its own folder ($(_HERE_)), and finds cicc and libdevice under nvvm/
// and the target's headers and libraries under $(_TARGET_DIR_), which it
// sets to targets/aarch64-linux for an aarch64 host compiler.
const nvccProfile = `
TOP              = $(_HERE_)/..

NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
`

// RealNvcc says whether the stand-in of b carries NVIDIA's real nvcc: a
// cross build base of a Tegra release, or an arm64 devel base of one made
// with NativeNvcc.
func (b Base) RealNvcc() bool {
	return b.Flavour == computecap.FlavourTegra && (b.Cross || b.NativeNvcc && b.Devel)
}

// realNvccLayer is the layer of NVIDIA's CUDA 11.8 toolkit for arch (the
// programs' architecture) at realNvccTree, and for arm64 Debian's GCC 11
// under /usr, the same in every base that carries it: compressed once,
// kept in k.Cache under its content's digest (cachedLayer). Without
// target, targets/aarch64-linux is left out: the stand-in nvidia/cuda devel
// images of the recipe (crossrecipe.go) get it from the cross package.
func (k Kit) realNvccLayer(arch Arch, target bool) (v1.Layer, error) {
	p, err := nvreal.Find(k.Source)
	if err != nil {
		return nil, fmt.Errorf("stand-in base with NVIDIA's nvcc: %w", err)
	}
	c := p.Compiler(string(arch))
	l := newLayer()
	if arch == ARM64 {
		if err := k.addGCC11(l); err != nil {
			return nil, err
		}
	}
	bin := realNvccTree + "/bin/"
	for dst, src := range map[string]string{
		bin + "nvcc": c.Nvcc(), realNvccTree + "/nvvm/bin/cicc": c.Cicc(),
		bin + "ptxas": c.Tool("ptxas"), bin + "fatbinary": c.Tool("fatbinary"),
		bin + "cudafe++": c.Tool("cudafe++"), bin + "bin2c": c.Tool("bin2c"),
	} {
		if err := l.copyFile(dst, 0o755, src); err != nil {
			return nil, err
		}
	}
	l.file(bin+"nvcc.profile", 0o644, []byte(nvccProfile))
	for dst, src := range map[string]string{bin + "crt": c.CRT(), realNvccTree + "/nvvm/libdevice": c.Libdevice()} {
		if err := copyTree(l, dst, src, nil); err != nil {
			return nil, err
		}
	}
	if !target {
		return k.cachedLayer("real-nvcc-notarget-"+string(arch), l)
	}
	if err := addRealNvccTarget(l, p, realNvccTree+"/targets/aarch64-linux/"); err != nil {
		return nil, err
	}
	return k.cachedLayer("real-nvcc-"+string(arch), l)
}

// addRealNvccTarget adds the target's files of NVIDIA's CUDA 11.8 for
// aarch64 under dir ("…/targets/aarch64-linux/"): the CUDA headers and
// the CUDA runtime's static archives.
func addRealNvccTarget(l *layer, p nvreal.Parts, dir string) error {
	if err := copyTree(l, dir+"include", p.TargetHeaders(), nil); err != nil {
		return err
	}
	for _, a := range []string{"libcudart_static.a", "libcudadevrt.a", "libculibos.a"} {
		if err := l.copyFile(dir+"lib/"+a, 0o644, filepath.Join(p.TargetStaticLibDir(), a)); err != nil {
			return err
		}
	}
	return nil
}

// addGCC11 adds Debian's arm64 GCC 11, g++ and binutils (`make deps`:
// bin/deps/gcc11-arm64) under their own paths, less what the cross tree
// leaves out too (crossSkip; but the binutils' libbfd and libopcodes, which
// as and ld link here), the static C library and gprofng.
func (k Kit) addGCC11(l *layer) error {
	root := filepath.Join(k.Source, "bin", "deps", "gcc11-arm64")
	if _, err := os.Stat(filepath.Join(root, "usr/bin/aarch64-linux-gnu-g++-11")); err != nil {
		return fmt.Errorf("Debian's arm64 GCC 11 at %s (run 'make deps' to fetch it): %w", root, err)
	}
	return copyTree(l, "", root, func(name string) bool {
		return crossSkip(name) && !strings.Contains(name, "-system.so") || name == "VERSIONS" || name == "usr/lib/aarch64-linux-gnu/libc.a" || strings.Contains(name, "gprofng") ||
			strings.Contains(name, "gp-")
	})
}

// gccLinks are build-essential's links in a base with NativeNvcc: Ubuntu
// 22.04's gcc, g++ and cpp are GCC 11's, and cc and c++ are theirs.
var gccLinks = map[string]string{"usr/bin/gcc": "gcc-11", "usr/bin/g++": "g++-11", "usr/bin/cpp": "cpp-11",
	"usr/bin/cc": "gcc-11", "usr/bin/c++": "g++-11"}

// copyTree copies the folder src into l at dst ("" is the root), links
// as links, less what skip (given the name in l) leaves out.
func copyTree(l *layer, dst, src string, skip func(name string) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join(dst, rel))
		if name == "." {
			return nil
		}
		if skip != nil && skip(name) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			l.dir(name)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			l.link(name, target)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return l.copyFile(name, int64(fi.Mode().Perm()), p)
		}
		return nil
	})
}
