package standin

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/internal/pywheel"
	"github.com/jetbake/jetbake/computecap"
)

// The stand-ins for NVIDIA's PyTorch containers (nvcr.io/nvidia/pytorch),
// one per JetPack line: the stand-in base of the line's CUDA flavour, with
// Debian's arm64 Python 3 and pip (Kit.Python, `make deps`), a stand-in
// torch installed in /usr/local/lib/python3.11/dist-packages as pip leaves a
// distribution (torch-shaped dist-info with RECORD and INSTALLER), and
// /etc/pip/constraint.txt, which NGC's containers ship since 25.03 "to
// prevent unintentional overwriting" of their packages; the stand-in sets no
// PIP_CONSTRAINT, so a build uses the file only when it asks for it. Beside
// torch the stand-in holds, pinned there too as NGC pins its packages, a
// distribution built against torch (torchvision, requiring that torch
// exactly) and a pure-Python one (tqdm): the two kinds of pin jetbake's
// vendor stack check tells apart (a build that loses the first is refused,
// one that changes the second is warned). Their versions are the
// stand-in's own (VendorTorchVision, VendorTqdm), not read from NGC's
// containers. The real containers run Python 3.12 on Ubuntu 24.04; the
// stand-in's Python is Debian 12's 3.11.

//go:embed all:pytorch/torch
var torchSource embed.FS

// PyTorchLine is one JetPack line's PyTorch container.
type PyTorchLine struct {
	// Ref is the real container, e.g. "nvcr.io/nvidia/pytorch:25.06-py3-igpu".
	Ref string
	// JetPack is the line, "6.2" or "7.0".
	JetPack string
	// Flavour is the container's CUDA build: Tegra (-igpu) or SBSA.
	Flavour computecap.Flavour
	// CUDA is torch.version.cuda and the container's CUDA.
	CUDA string
	// Torch is torch.__version__.
	Torch string
	// Modules are the fat binaries in torch/lib/libtorch_cuda.so's .nv_fatbin.
	Modules []Module
}

// pytorchLines are the lines the test bed models. 6.2: NGC 25.06-py3-igpu,
// CUDA 12.9, torch 2.8.0a0+5228986c39.nv25.06, built for sm_87 only (the
// Jetson builds' TORCH_CUDA_ARCH_LIST): NVIDIA's real sm_87 cubin, made by
// ptxas and fatbinary (nvreal.Torch87). 7.0: NGC 25.08-py3, the unified SBSA
// container (CUDA 13.0, torch 2.8.0a0+34c6371d24.nv25.08 as its release
// notes give it), with cubins for jetson-containers' SBSA arch list
// 8.7, 9.0, 10.0, 10.3, 11.0, 12.0, 12.1 and PTX of the newest, and a
// second module with sm_90 code only, as NVIDIA's builds carry kernels
// built for one GPU alone (Hopper's sm_90 kernels): Thor's audit reads it
// as partial, which does not refuse the build.
func pytorchLines() []PyTorchLine {
	sbsa := []fatbintest.Code{}
	for _, sm := range []string{"8.7", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"} {
		sbsa = append(sbsa, fatbintest.Cubin(sm))
	}
	sbsa = append(sbsa, fatbintest.PTX("12.1"))
	return []PyTorchLine{
		{Ref: "nvcr.io/nvidia/pytorch:25.06-py3-igpu", JetPack: "6.2", Flavour: computecap.FlavourTegra, CUDA: "12.9",
			Torch: "2.8.0a0+5228986c39.nv25.06", Modules: []Module{Real(nvreal.Torch87())}},
		{Ref: "nvcr.io/nvidia/pytorch:25.08-py3", JetPack: "7.0", Flavour: computecap.FlavourSBSA, CUDA: "13.0",
			Torch: "2.8.0a0+34c6371d24.nv25.08", Modules: []Module{Written(sbsa...), Written(fatbintest.Cubin("9.0"))}},
	}
}

// PyTorchLineFor is the stand-in container of a JetPack line ("6.2", "7.0").
func PyTorchLineFor(jetpack string) (PyTorchLine, error) {
	var known []string
	for _, l := range pytorchLines() {
		if l.JetPack == jetpack {
			return l, nil
		}
		known = append(known, l.JetPack)
	}
	return PyTorchLine{}, fmt.Errorf("stand-in PyTorch base: no container for JetPack %q: use one of %s", jetpack, strings.Join(known, ", "))
}

// The versions of the stand-in bases' other pinned distributions.
const (
	// VendorTorchVision is their torchvision, built against their torch.
	VendorTorchVision = "0.23.0a0"
	// VendorTqdm is their tqdm, pure Python.
	VendorTqdm = "4.66.5"
)

// SitePackages is where NGC's containers (and the stand-ins) install torch.
const SitePackages = "/usr/local/lib/python3.11/dist-packages"

// ConstraintPath is NGC's pip constraint file.
const ConstraintPath = "/etc/pip/constraint.txt"

// TorchDist is a stand-in torch distribution: torch/__init__.py, torch/cuda,
// torch/version.py with version and cuda ("" writes cuda = None, a CPU
// build) and, with CUDA, torch/lib/libtorch_cuda.so, a real shared object
// for arch whose .nv_fatbin holds modules. tag is the wheel tag.
func (k Kit) TorchDist(ctx context.Context, version, cuda, tag string, arch Arch, modules []Module) (pywheel.Dist, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(torchSource, "pytorch/torch", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := torchSource.ReadFile(p)
		files[strings.TrimPrefix(p, "pytorch/")] = data
		return err
	})
	if err != nil {
		return pywheel.Dist{}, err
	}
	cudaValue := "None"
	if cuda != "" {
		cudaValue = fmt.Sprintf("%q", cuda)
		fatbins, err := k.fatbins(ctx, modules)
		if err != nil {
			return pywheel.Dist{}, err
		}
		lib, err := BuildFatbinLibrary(ctx, k.Cache, arch, "libtorch_cuda.so", fatbins...)
		if err != nil {
			return pywheel.Dist{}, err
		}
		if files["torch/lib/libtorch_cuda.so"], err = os.ReadFile(lib); err != nil {
			return pywheel.Dist{}, err
		}
	}
	files["torch/version.py"] = []byte(fmt.Sprintf("__all__ = ['__version__', 'cuda']\n__version__ = %q\ncuda = %s\n", version, cudaValue))
	return pywheel.Dist{Name: "torch", Version: version, Tag: tag, RequiresPython: ">=3.9",
		Summary: "Tensors and Dynamic neural networks in Python with strong GPU acceleration", Files: files}, nil
}

// Constraints is the stand-in container's /etc/pip/constraint.txt: its
// torch, torchvision and tqdm, exactly.
func Constraints(line PyTorchLine) string {
	return "torch==" + line.Torch + "\ntorchvision==" + VendorTorchVision + "\ntqdm==" + VendorTqdm + "\n"
}

// PyTorchImage is the stand-in container of line.
func (k Kit) PyTorchImage(ctx context.Context, line PyTorchLine) (v1.Image, error) {
	base, err := k.Image(ctx, Base{Ref: line.Ref, CUDA: line.CUDA, Flavour: line.Flavour, Ubuntu: "24.04",
		Libs: UbuntuLibs("24.04"), CABundle: true})
	if err != nil {
		return nil, err
	}
	l := newLayer()
	if err := k.addPython(l); err != nil {
		return nil, err
	}
	torch, err := k.TorchDist(ctx, line.Torch, line.CUDA, "cp311-cp311-linux_aarch64", ARM64, line.Modules)
	if err != nil {
		return nil, err
	}
	vision := pywheel.Dist{Name: "torchvision", Version: VendorTorchVision, Tag: "cp311-cp311-linux_aarch64", RequiresPython: ">=3.9",
		Requires: []string{"torch==" + line.Torch},
		Files:    map[string][]byte{"torchvision/__init__.py": []byte(fmt.Sprintf("__version__ = %q\n", VendorTorchVision))}}
	tqdm := pywheel.Dist{Name: "tqdm", Version: VendorTqdm, Tag: "py3-none-any", RequiresPython: ">=3.7",
		Files: map[string][]byte{"tqdm/__init__.py": []byte(fmt.Sprintf("__version__ = %q\n", VendorTqdm))}}
	for _, d := range []pywheel.Dist{torch, vision, tqdm} {
		installed, err := d.Installed()
		if err != nil {
			return nil, err
		}
		for p, data := range installed {
			l.file(strings.TrimPrefix(SitePackages, "/")+"/"+p, 0o644, data)
		}
	}
	l.file(strings.TrimPrefix(ConstraintPath, "/"), 0o644, []byte(Constraints(line)))
	layer, err := l.build()
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Config.Env = append(cf.Config.Env, "PYTORCH_VERSION="+line.Torch)
	return mutate.ConfigFile(img, cf)
}

// addPython copies Debian's unpacked Python and pip, without their docs,
// and links python3 and python to python3.11.
func (k Kit) addPython(l *layer) error {
	root := k.Python
	if _, err := os.Stat(filepath.Join(root, "usr/bin/python3.11")); err != nil {
		return fmt.Errorf("Debian's arm64 Python at %q (run 'make deps' to fetch it): %w", root, err)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(rel, "usr/share/doc") || strings.HasPrefix(rel, "usr/share/man") || strings.HasSuffix(rel, ".pyc") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			l.link(rel, target)
		case d.IsDir():
			l.dir(rel)
		default:
			return l.copyFile(rel, int64(fi.Mode().Perm()), p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.link("usr/bin/python3", "python3.11")
	l.link("usr/bin/python", "python3.11")
	return nil
}

// PyTorchBase pushes the stand-in PyTorch container of a JetPack line
// ("6.2" or "7.0") to the registry at host, under the real container's
// repository and tag, and returns the pushed reference.
func PyTorchBase(ctx context.Context, kit Kit, host, jetpack string, opts ...remote.Option) (string, error) {
	line, err := PyTorchLineFor(jetpack)
	if err != nil {
		return "", err
	}
	img, err := kit.PyTorchImage(ctx, line)
	if err != nil {
		return "", err
	}
	src, err := name.ParseReference(line.Ref)
	if err != nil {
		return "", err
	}
	dst, err := name.ParseReference(host+"/"+src.Context().RepositoryStr()+":"+src.Identifier(), name.Insecure)
	if err != nil {
		return "", err
	}
	return dst.String(), remote.Write(dst, img, append(opts, remote.WithContext(ctx))...)
}

// BedKit is the kit of a checkout's bin/ as `make deps` and `make build`
// fill it (Debian's arm64 busybox, glibc and Python under bin/deps, the
// compiled stand-ins under bin/standin), or an error naming what is missing.
func BedKit(repoRoot string) (Kit, error) {
	deps := filepath.Join(repoRoot, "bin", "deps")
	k := Kit{Busybox: filepath.Join(deps, "busybox-arm64", "bin", "busybox"), Glibc: filepath.Join(deps, "glibc-arm64"),
		Python: filepath.Join(deps, "python3-arm64"), Cache: filepath.Join(repoRoot, "bin", "standin"), Source: repoRoot}
	for _, p := range []string{k.Busybox, filepath.Join(k.Glibc, "sbin", "ldconfig"), filepath.Join(k.Python, "usr", "bin", "python3.11")} {
		if _, err := os.Stat(p); err != nil {
			return Kit{}, fmt.Errorf("the test bed lacks %s: run 'make deps' as root", p)
		}
	}
	return k, nil
}
