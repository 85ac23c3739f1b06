package pyindex

import (
	"context"
	"fmt"
	"os"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/pywheel"
	"github.com/jetbake/jetbake/builder/internal/standin"
)

// Dists are the served distributions.
func Dists(ctx context.Context, kit standin.Kit) ([]pywheel.Dist, error) {
	torch, err := kit.TorchDist(ctx, PyPITorch, "", "cp311-cp311-manylinux_2_28_aarch64", standin.ARM64, nil)
	if err != nil {
		return nil, err
	}
	bnb, err := bitsandbytes(ctx, kit)
	if err != nil {
		return nil, err
	}
	return []pywheel.Dist{app(), pure("einops", "0.8.1"), pure("tqdm", Tqdm), torch, bnb, torchvision(),
		{Name: TorchPuller, Version: "1.0.0", Tag: "py3-none-any", RequiresPython: ">=3.9",
			Summary:  "A helper whose install pulls PyPI's torch and torchvision",
			Requires: []string{"torch==" + PyPITorch, "torchvision==" + PyPITorchVision},
			Files:    map[string][]byte{"torchy_helper/__init__.py": []byte("import torch\nimport torchvision\n")}},
	}, nil
}

// app is the OBLITERATUS-shaped app: its CLI prints what the Jetson gate
// asks torch (its version, CUDA, the device, a small op) and its arguments.
func app() pywheel.Dist {
	cli := `"""obliteratus.cli: the test bed's app."""
import sys


def main(argv=None):
    import torch
    args = sys.argv[1:] if argv is None else argv
    print("obliteratus 0.1.0 torch %s cuda %s args %s" % (torch.__version__, torch.version.cuda, " ".join(args)))
    if "--gate" in args:
        ok = torch.cuda.is_available()
        print("cuda available: %s" % ok)
        if not ok:
            return 1
        print("device: %s" % torch.cuda.get_device_name(0))
        y = torch.ones(8, device="cuda") * 2.0 + 1.0
        print("op: %s finite %s" % (y.sum().item(), bool(torch.isfinite(y).all())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
`
	return pywheel.Dist{Name: App, Version: "0.1.0", Tag: "py3-none-any", RequiresPython: ">=3.10",
		Summary:  "Stand-in for OBLITERATUS: a PyTorch command line",
		Requires: []string{"torch>=2.0", "einops>=0.7", "tqdm>=4.0", `bitsandbytes>=0.45; extra == "quantization"`},
		Extras:   []string{"quantization"}, ConsoleScripts: map[string]string{App: "obliteratus.cli:main"},
		Files: map[string][]byte{"obliteratus/__init__.py": []byte("__version__ = \"0.1.0\"\n"),
			"obliteratus/cli.py": []byte(cli)}}
}

// torchvision is PyPI's torchvision for PyPITorch: built against that torch,
// whose exact version it requires, as PyPI's wheels do.
func torchvision() pywheel.Dist {
	return pywheel.Dist{Name: "torchvision", Version: PyPITorchVision, Tag: "cp311-cp311-manylinux_2_28_aarch64", RequiresPython: ">=3.9",
		Summary: "image and video datasets and models for torch deep learning", Requires: []string{"torch==" + PyPITorch},
		Files: map[string][]byte{"torchvision/__init__.py": []byte(fmt.Sprintf("__version__ = %q\n", PyPITorchVision))}}
}

// pure is a small pure-Python dependency.
func pure(name, version string) pywheel.Dist {
	return pywheel.Dist{Name: name, Version: version, Tag: "py3-none-any", RequiresPython: ">=3.8",
		Files: map[string][]byte{name + "/__init__.py": []byte(fmt.Sprintf("__version__ = %q\n", version))}}
}

// bitsandbytes is the SBSA wheel: PyPI's aarch64 bitsandbytes is built on
// SBSA runners for sm_75, sm_80 and sm_90 with PTX for the newest only.
func bitsandbytes(ctx context.Context, kit standin.Kit) (pywheel.Dist, error) {
	codes := []fatbintest.Code{fatbintest.Cubin("7.5"), fatbintest.Cubin("8.0"), fatbintest.Cubin("9.0"), fatbintest.PTX("9.0")}
	lib, err := standin.BuildCUDALibrary(ctx, kit.Cache, standin.ARM64, "libbitsandbytes_cuda126.so", codes)
	if err != nil {
		return pywheel.Dist{}, err
	}
	data, err := os.ReadFile(lib)
	if err != nil {
		return pywheel.Dist{}, err
	}
	return pywheel.Dist{Name: Bitsandbytes, Version: "0.47.0", Tag: "py3-none-manylinux_2_24_aarch64",
		RequiresPython: ">=3.9", Summary: "k-bit optimizers and matrix multiplication routines (SBSA build)",
		Requires: []string{"torch<3,>=2.2"},
		Files:    map[string][]byte{"bitsandbytes/__init__.py": []byte("__version__ = \"0.47.0\"\n"), BitsandbytesLib: data}}, nil
}
