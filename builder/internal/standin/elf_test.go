package standin

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// soname reads the DT_SONAME and the machine of the shared object data.
func soname(t *testing.T, data []byte) (string, elf.Machine) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(data))
	require.NoError(t, err)
	defer f.Close()
	names, err := f.DynString(elf.DT_SONAME)
	require.NoError(t, err)
	require.Len(t, names, 1)
	return names[0], f.Machine
}

// exported lists the functions a shared object exports.
func exported(t *testing.T, path string) []string {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	syms, err := f.DynamicSymbols()
	require.NoError(t, err)
	var out []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			out = append(out, s.Name)
		}
	}
	return out
}

func TestBuildLibcuda(t *testing.T) {
	ctx, cache := t.Context(), t.TempDir()
	driverAPI := []string{"cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName", "cuDeviceGetAttribute", "cuGetErrorName",
		// The kernel check's calls, under the symbols cuda.h maps them to.
		"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuCtxSynchronize", "cuModuleLoadData",
		"cuModuleLoadDataEx", "cuModuleGetFunction", "cuModuleUnload", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2",
		"cuMemcpyDtoH_v2", "cuLaunchKernel"}
	for _, arch := range []Arch{AMD64, ARM64} {
		t.Run(string(arch), func(t *testing.T) {
			want := map[Arch]elf.Machine{AMD64: elf.EM_X86_64, ARM64: elf.EM_AARCH64}[arch]
			orin, err := BuildLibcuda(ctx, cache, Driver{Arch: arch, GPU: computecap.Capability{Major: 8, Minor: 7}})
			require.NoError(t, err)
			data, err := os.ReadFile(orin)
			require.NoError(t, err)
			name, machine := soname(t, data)
			require.Equal(t, "libcuda.so.1", name, "the soname NVIDIA's runtime makes its link from")
			require.Equal(t, want, machine)
			require.Subset(t, exported(t, orin), driverAPI)

			again, err := BuildLibcuda(ctx, cache, Driver{Arch: arch, GPU: computecap.Capability{Major: 8, Minor: 7}})
			require.NoError(t, err)
			require.Equal(t, orin, again, "the same build is reused")
			thor, err := BuildLibcuda(ctx, cache, Driver{Arch: arch, GPU: computecap.Capability{Major: 11, Minor: 0}})
			require.NoError(t, err)
			require.NotEqual(t, orin, thor, "another host's answers are another build")

			stub, err := BuildLibcuda(ctx, cache, Driver{Arch: arch, Stub: true})
			require.NoError(t, err)
			require.Subset(t, exported(t, stub), driverAPI, "the stub links like the driver")
			without, err := BuildLibcuda(ctx, cache, Driver{Arch: arch, OmitDriverVersion: true})
			require.NoError(t, err)
			require.NotContains(t, exported(t, without), "cuDriverGetVersion")
		})
	}
	_, err := BuildLibcuda(ctx, cache, Driver{Arch: "riscv64"})
	require.ErrorContains(t, err, `unknown architecture "riscv64"`)
}

func TestBuildSharedObject(t *testing.T) {
	path, err := BuildSharedObject(t.Context(), t.TempDir(), ARM64, "libssl.so.3")
	require.NoError(t, err)
	require.Equal(t, "libssl.so.3", filepath.Base(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	name, machine := soname(t, data)
	require.Equal(t, "libssl.so.3", name)
	require.Equal(t, elf.EM_AARCH64, machine)

	for _, bad := range []string{"", "../libssl.so.3", "lib ssl"} {
		_, err := BuildSharedObject(t.Context(), t.TempDir(), ARM64, bad)
		require.ErrorContains(t, err, "is not a soname", bad)
	}
}

// Tegra and SBSA bases lay out CUDA as NVIDIA's packages do; a devel
// base has the driver stub, a runtime base has not.
func TestImageCUDATree(t *testing.T) {
	kit := testKit(t)
	tests := []struct {
		name    string
		base    Base
		targets string
	}{
		{name: "l4t-jetpack (Tegra devel)", base: Base{Ref: jetpackBase, CUDA: "12.6", Flavour: computecap.FlavourTegra, Devel: true}, targets: "targets/aarch64-linux"},
		{name: "l4t-cuda runtime (Tegra)", base: Base{Ref: l4tCUDABase, CUDA: "12.6", Flavour: computecap.FlavourTegra}, targets: "targets/aarch64-linux"},
		{name: "cuda devel (SBSA)", base: Base{Ref: cudaDevel, CUDA: "13.2", Flavour: computecap.FlavourSBSA, Devel: true}, targets: "targets/sbsa-linux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := kit.Image(t.Context(), tt.base)
			require.NoError(t, err)
			fs := files(t, img)
			tree := "usr/local/cuda-" + tt.base.CUDA
			require.Equal(t, entry{typ: tar.TypeSymlink, link: "cuda-" + tt.base.CUDA, mode: 0o777}, fs["usr/local/cuda"])
			require.Equal(t, entry{typ: tar.TypeSymlink, link: tt.targets + "/lib", mode: 0o777}, fs[tree+"/lib64"])
			require.Contains(t, fs[tree+"/version.json"].data, `"version": "`+tt.base.CUDA+`"`)
			require.Equal(t, byte(tar.TypeDir), fs[tree+"/"+tt.targets+"/lib"].typ)
			stub, ok := fs[tree+"/"+tt.targets+"/lib/stubs/libcuda.so"]
			require.Equal(t, tt.base.Devel, ok, "only devel bases carry the driver stub")
			if ok {
				name, machine := soname(t, []byte(stub.data))
				require.Equal(t, "libcuda.so.1", name)
				require.Equal(t, elf.EM_AARCH64, machine)
			}
		})
	}
}
