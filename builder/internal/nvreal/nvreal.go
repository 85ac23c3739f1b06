// Package nvreal finds NVIDIA's own binaries that `make deps` fetches from
// Debian's non-free component into bin/deps (builder/internal/tools/deps.sh):
// the CUDA 11.8 toolkit's device-code tools (cuobjdump, ptxas, fatbinary),
// NVIDIA's arm64 CUDA libraries and the arm64 driver user space 535
// (libcuda.so.1, NVML, nvidia-smi). The tests hold jetbake's readers against
// them: cuobjdump is the oracle for the fat-binary reader, ptxas and
// fatbinary make real device code for the stand-ins, and the CUDA probe meets
// the real driver library.
package nvreal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Parts is where `make deps` unpacked NVIDIA's packages.
type Parts struct {
	// Toolkit is the amd64 toolkit's root (usr/bin/cuobjdump, ...).
	Toolkit string
	// CUDALibs is the arm64 CUDA libraries' root (usr/lib/aarch64-linux-gnu/...).
	CUDALibs string
	// Driver is the arm64 driver user space's root
	// (usr/lib/aarch64-linux-gnu/nvidia/current/libcuda.so.1, usr/lib/nvidia/current/nvidia-smi).
	Driver string
	// TargetDev is the arm64 nvidia-cuda-dev's part an aarch64 compile
	// needs: the CUDA headers (usr/include) and the static CUDA runtime.
	TargetDev string
	// NvccArm64 is the arm64 toolkit's compiler (Compiler("arm64")).
	NvccArm64 string
	// Made is where the real fat binaries made from them are cached
	// (bin/nvidia-fatbins; see Fatbin).
	Made string
}

// Find returns the parts under repoRoot's bin/deps, or an error that names
// the first one missing and the fix.
func Find(repoRoot string) (Parts, error) {
	deps := filepath.Join(repoRoot, "bin", "deps")
	p := Parts{Toolkit: filepath.Join(deps, "nvidia-cuda-amd64"), CUDALibs: filepath.Join(deps, "nvidia-cuda-arm64"),
		Driver: filepath.Join(deps, "nvidia-driver-arm64"), TargetDev: filepath.Join(deps, "nvidia-cuda-dev-arm64"),
		NvccArm64: filepath.Join(deps, "nvidia-nvcc-arm64"), Made: filepath.Join(repoRoot, "bin", "nvidia-fatbins")}
	for _, f := range []string{p.Cuobjdump(), p.Ptxas(), p.Fatbinary(), p.Libcuda(), p.NvidiaSmi(), p.Compiler("amd64").Nvcc(),
		p.Compiler("amd64").Cicc(), p.Compiler("arm64").Cicc(), filepath.Join(p.TargetHeaders(), "cuda_runtime.h")} {
		if _, err := os.Stat(f); err != nil {
			return Parts{}, fmt.Errorf("the test bed lacks NVIDIA's %s: run 'make deps' as root (it fetches NVIDIA's packages from Debian's non-free component)", f)
		}
	}
	return p, nil
}

// Cuobjdump is NVIDIA's cuobjdump (amd64).
func (p Parts) Cuobjdump() string { return filepath.Join(p.Toolkit, "usr", "bin", "cuobjdump") }

// Ptxas is NVIDIA's PTX assembler (amd64): CUDA 11.8 targets sm_35 to sm_90.
func (p Parts) Ptxas() string { return filepath.Join(p.Toolkit, "usr", "bin", "ptxas") }

// Fatbinary is NVIDIA's fat-binary writer (amd64).
func (p Parts) Fatbinary() string { return filepath.Join(p.Toolkit, "usr", "bin", "fatbinary") }

// Compiler is NVIDIA's CUDA 11.8 compiler of one architecture, as Debian's
// nvidia-cuda-toolkit unpacks: nvcc, cicc and crt/ under
// usr/lib/nvidia-cuda-toolkit (Debian's /usr/bin/nvcc is a script that
// runs the nvcc there), and the device-code tools in usr/bin.
type Compiler struct {
	// Root is the unpacked package's root.
	Root string
}

// Compiler is the compiler for arch ("amd64": the toolkit at Toolkit;
// "arm64": aarch64 programs, which run under QEMU here).
func (p Parts) Compiler(arch string) Compiler {
	if arch == "arm64" {
		return Compiler{Root: p.NvccArm64}
	}
	return Compiler{Root: p.Toolkit}
}

func (c Compiler) dir() string { return filepath.Join(c.Root, "usr", "lib", "nvidia-cuda-toolkit") }

// Nvcc is NVIDIA's CUDA compiler driver; it reads nvcc.profile from the
// folder it was started from.
func (c Compiler) Nvcc() string { return filepath.Join(c.dir(), "bin", "nvcc") }

// Cicc is NVIDIA's CUDA front end, which nvcc runs.
func (c Compiler) Cicc() string { return filepath.Join(c.dir(), "bin", "cicc") }

// CRT is the folder of nvcc's link stubs (link.stub, prelink.stub).
func (c Compiler) CRT() string { return filepath.Join(c.dir(), "bin", "crt") }

// Libdevice is the folder of NVIDIA's libdevice bitcode, which cicc links.
func (c Compiler) Libdevice() string { return filepath.Join(c.dir(), "libdevice") }

// Tool is one of the device-code programs nvcc runs (ptxas, fatbinary,
// cudafe++, bin2c).
func (c Compiler) Tool(name string) string { return filepath.Join(c.Root, "usr", "bin", name) }

// TargetHeaders is the folder of the CUDA headers for aarch64 (Debian's
// /usr/include of the arm64 nvidia-cuda-dev).
func (p Parts) TargetHeaders() string { return filepath.Join(p.TargetDev, "usr", "include") }

// TargetStaticLibDir is the folder of the static CUDA runtime for aarch64
// (libcudart_static.a, libcudadevrt.a, libculibos.a).
func (p Parts) TargetStaticLibDir() string {
	return filepath.Join(p.TargetDev, "usr", "lib", "aarch64-linux-gnu")
}

// LibDir is the folder of NVIDIA's arm64 CUDA libraries.
func (p Parts) LibDir() string { return filepath.Join(p.CUDALibs, "usr", "lib", "aarch64-linux-gnu") }

// Libraries are NVIDIA's arm64 CUDA libraries, the real files (not their
// symbolic links), sorted by name.
func (p Parts) Libraries() ([]string, error) {
	entries, err := os.ReadDir(p.LibDir())
	if err != nil {
		return nil, err
	}
	var libs []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.Contains(e.Name(), ".so.") {
			libs = append(libs, filepath.Join(p.LibDir(), e.Name()))
		}
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("no CUDA library in %s: run 'make deps' as root", p.LibDir())
	}
	return libs, nil
}

// DriverLibDir is the folder of the driver's libraries (libcuda.so.1,
// libnvidia-ml.so.1, libnvidia-ptxjitcompiler.so.1), as Debian lays them out.
func (p Parts) DriverLibDir() string {
	return filepath.Join(p.Driver, "usr", "lib", "aarch64-linux-gnu", "nvidia", "current")
}

// Libcuda is NVIDIA's arm64 libcuda.so.1 (a link to libcuda.so.535.*).
func (p Parts) Libcuda() string { return filepath.Join(p.DriverLibDir(), "libcuda.so.1") }

// NvidiaSmi is NVIDIA's arm64 nvidia-smi.
func (p Parts) NvidiaSmi() string {
	return filepath.Join(p.Driver, "usr", "lib", "nvidia", "current", "nvidia-smi")
}
