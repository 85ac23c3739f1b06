package standin

import (
	"strconv"
	"strings"
)

// sslPackage is the OpenSSL runtime package of an Ubuntu release: libssl1.1
// on 20.04, libssl3 on 22.04, libssl3t64 from 24.04 (Ubuntu's 64-bit time_t
// transition renamed it).
func sslPackage(ubuntu string) string {
	switch {
	case ubuntu != "" && ubuntu < "22.04":
		return "libssl1.1"
	case ubuntu == "" || ubuntu < "24.04":
		return "libssl3"
	}
	return "libssl3t64"
}

// UbuntuLibs are the shared libraries every Ubuntu-based image has that
// TEI's router links besides libc: OpenSSL's (libssl and libcrypto of the
// release, the packages ca-certificates and curl need), the GCC runtime
// (libgcc_s, which Rust's standard library links) and the C++ runtime
// (libstdc++, which CUDA's static libraries and the tokenizers' C++ need;
// apt itself links it, so no Ubuntu image is without it).
func UbuntuLibs(ubuntu string) []string {
	return append([]string{SSLSoname(ubuntu), CryptoSoname(ubuntu)}, runtimeLibs...)
}

// runtimeLibs are the GCC and C++ runtimes.
var runtimeLibs = []string{"libgcc_s.so.1", "libstdc++.so.6"}

// cudaLib is one of CUDA's shared libraries that TEI's router links with
// cudarc's dynamic-linking, with the Ubuntu package (without its -X-Y
// version suffix) that installs it; Kernels marks the ones that ship GPU
// code (see LibraryKernels).
type cudaLib struct {
	Soname, Package string
	Kernels         bool
}

// cudaLibs are the libraries dynamic linking needs for a CUDA release, by
// the sonames of its major: CUDA 12 and 13 number libcudart, libcublas,
// libcublasLt and libnvrtc by the major; CUDA 11 kept libcudart.so.11.0 and
// libnvrtc.so.11.2; libcurand has been libcurand.so.10 since CUDA 10.
func cudaLibs(cuda string) []cudaLib {
	major := cudaMajor(cuda)
	m := strconv.Itoa(major)
	cudart, nvrtc := "libcudart.so."+m, "libnvrtc.so."+m
	if major == 11 {
		cudart, nvrtc = "libcudart.so.11.0", "libnvrtc.so.11.2"
	}
	return []cudaLib{
		{Soname: cudart, Package: "cuda-cudart"},
		{Soname: "libcublas.so." + m, Package: "libcublas", Kernels: true},
		{Soname: "libcublasLt.so." + m, Package: "libcublas", Kernels: true},
		{Soname: "libcurand.so.10", Package: "libcurand", Kernels: true},
		{Soname: nvrtc, Package: "cuda-nvrtc"},
	}
}

// CUDASonames are the sonames of cudaLibs, which a router built with
// dynamic-linking for cuda records as DT_NEEDED.
func CUDASonames(cuda string) []string {
	var out []string
	for _, l := range cudaLibs(cuda) {
		out = append(out, l.Soname)
	}
	return out
}

// cudaMajor is 12 of "12.6".
func cudaMajor(cuda string) int {
	n, _ := strconv.Atoi(strings.SplitN(cuda, ".", 2)[0])
	return n
}

// cudaPackageSuffix is "-12-6" of "12.6.11".
func cudaPackageSuffix(cuda string) string {
	return "-" + strings.ReplaceAll(majorMinor(cuda), ".", "-")
}

// devLink is the development link a library's soname is linked through:
// "libcublas.so" of "libcublas.so.12".
func devLink(soname string) string {
	i := strings.Index(soname, ".so")
	return soname[:i+3]
}
