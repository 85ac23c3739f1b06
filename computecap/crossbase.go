package computecap

import "fmt"

// CrossTarget is what a cross build base must hold to compile a router for
// one CUDA flavour on an x86_64 machine: one row of the table per flavour.
//
// Sources: NVIDIA's CUDA installation guide installs the "Cross Jetson"
// (aarch64-linux) and "Cross SBSA" (sbsa-linux) variants of the toolkit on
// an x86_64 host, with Ubuntu's g++-aarch64-linux-gnu as the host compiler
// (docs.nvidia.com/deeplearning/cudnn/installation/cross-compiling.html;
// TensorRT's "Cross Compiling Samples" names the packages
// cuda-cross-<arch>-X-Y). NVIDIA's cross-linux-sbsa package index
// (developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/cross-linux-sbsa/Packages)
// lists cuda-cross-sbsa-12-5, "Architecture: all", which installs the
// target files under targets/sbsa-linux; JetPack's x86_64 repository ships
// cuda-cross-aarch64-X-Y for targets/aarch64-linux. NVIDIA's
// cuda-samples toolchain file (cmake/toolchains/toolchain-aarch64-linux.cmake)
// passes nvcc -ccbin aarch64-linux-gnu-g++ and picks targets/aarch64-linux,
// else targets/sbsa-linux.
type CrossTarget struct {
	// Flavour is the CUDA build of the release's JetPack line.
	Flavour Flavour `json:"flavour"`
	// Dir is the folder under the CUDA tree's targets/: "aarch64-linux".
	Dir string `json:"dir"`
	// Package is NVIDIA's cross package's name with %d-%d for the CUDA
	// major and minor: "cuda-cross-aarch64-%d-%d".
	Package string `json:"package"`
	// Platform is the only build platform a cross base may have: the
	// cross packages and Debian's or Ubuntu's gcc-aarch64-linux-gnu are
	// x86_64 programs.
	Platform string `json:"platform"`
}

// PackageFor is the cross package of CUDA release v: "cuda-cross-sbsa-13-0".
func (c CrossTarget) PackageFor(v CUDAVersion) string {
	return fmt.Sprintf(c.Package, v.Major, v.Minor)
}

// crossTargetRows are the cross build bases' rows, one per flavour.
func crossTargetRows() []CrossTarget {
	return []CrossTarget{
		{Flavour: FlavourTegra, Dir: "aarch64-linux", Package: "cuda-cross-aarch64-%d-%d", Platform: "linux/amd64"},
		{Flavour: FlavourSBSA, Dir: "sbsa-linux", Package: "cuda-cross-sbsa-%d-%d", Platform: "linux/amd64"},
	}
}

// CrossTargetOf is the row of flavour f; false when none.
func (t *Table) CrossTargetOf(f Flavour) (CrossTarget, bool) {
	for _, c := range t.CrossTargets {
		if c.Flavour == f {
			return c, true
		}
	}
	return CrossTarget{}, false
}
