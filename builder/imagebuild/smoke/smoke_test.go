package smoke

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const testImage = "the runtime image (stage runtime-base of Dockerfile-jetson on nvcr.io/nvidia/l4t-cuda:12.6.11-runtime)"

// testSpec is the smoke run of a release with two targets.
func testSpec() Spec {
	return Spec{
		Router: "text-embeddings-router", Args: []string{"--version"}, Output: "/usr/local/bin/text-embeddings-router",
		Paths:    []string{"/usr/local/bin/router-87", "/usr/local/bin/router-110"},
		OwnFiles: []string{"/usr/local/bin/jetbake-entrypoint", "/etc/jetbake/image.json"},
		Stub:     BuildBaseStub("nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04"), CUDA: "13.2",
	}
}

func TestSmokeResultNamesTheMissingLibrary(t *testing.T) {
	s := testSpec()
	require.NoError(t, s.result("router-87", "0", "text-embeddings-router 1.8.0", testImage))
	err := s.result("router-87", "127",
		"/usr/local/bin/router-87: error while loading shared libraries: libssl.so.3: cannot open shared object file: No such file or directory\n", testImage)
	require.ErrorContains(t, err, "router-87 --version (exit 127) fails on "+testImage+": it needs libssl.so.3, which "+testImage+" lacks")
	err = s.result("router-87", "1", "starting\nError: something else\n", testImage)
	require.ErrorContains(t, err, "router-87 --version (exit 1) fails on "+testImage+": Error: something else")
}

// The smoke run's result file decides the verdict: every library each
// binary needs, named at once; every binary must have run and exited 0; no
// folder jetbake's layers create may be a link in the image; the image must
// have a CA bundle.
func TestJudgeSmoke(t *testing.T) {
	s := testSpec() // router-87 and router-110
	bins := []Binary{{Binary: "router-87", Needed: []string{"libcuda.so.1", "libssl.so.3", "libcrypto.so.3", "libc.so.6"}}}
	files := map[string]string{
		"router-87.ldd":  "\tlinux-vdso.so.1 (0x0000)\n\tlibcuda.so.1 => /jetbake-smoke-driver/libcuda.so.1 (0x1)\n\tlibssl.so.3 => not found\n\tlibcrypto.so.3 => not found\n",
		"router-110.ldd": "\tlibcuda.so.1 => not found\n\tlibssl.so.3 => not found\n\tlibcudart.so.13 => not found\n",
		"router-87.log":  "/usr/local/bin/router-87: error while loading shared libraries: libssl.so.3: cannot open shared object file: No such file or directory\n",
		"router-110.log": "/usr/local/bin/router-110: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory\n",
	}
	read := func(name string) string { return files[name] }
	tests := []struct {
		name, result string
		want         []string
	}{
		{name: "all good", result: "stub /usr/local/cuda/lib64/stubs/libcuda.so\nrc router-87 0\nrc router-110 0\nca\n"},
		{name: "no exit status", result: "rc router-87 0\nca\n", want: []string{"smoke run of router-110 on " + testImage + " left no exit status"}},
		{name: "a binary fails", result: "rc router-87 0\nrc router-110 127\nca\n", want: []string{"router-110 --version (exit 127) fails on " + testImage + ": it needs libcuda.so.1"}},
		{name: "every missing library at once", result: "ldd router-87 1\nrc router-87 127\nldd router-110 1\nrc router-110 127\nca\n",
			want: []string{"router-87, router-110: the smoke run's loader finds no libssl.so.3, libcrypto.so.3, libcuda.so.1, libcudart.so.13 in " + testImage,
				"error while loading shared libraries: libssl.so.3: cannot open shared object file",
				"router-87's DT_NEEDED: libcuda.so.1, libssl.so.3, libcrypto.so.3, libc.so.6",
				"libcuda.so.1 is the CUDA driver, which NVIDIA's runtime mounts from the Jetson, so the smoke run stands a base's driver stub in for it, and the build base nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04 has none (/usr/local/cuda/lib64/stubs/libcuda.so, ",
				"install what provides libssl.so.3, libcrypto.so.3 in the runtime stage"}},
		{name: "CUDA's runtime", result: "ldd router-110 1\nrc router-110 127\nrc router-87 0\nca\n", want: []string{
			"router-110: the smoke run's loader finds no libcuda.so.1, libssl.so.3, libcudart.so.13 in " + testImage,
			"libcudart.so.13 is CUDA's runtime, which a router with flash attention NEEDs in every linking mode (candle-flash-attn links it dynamically): install cuda-cudart-13-2 in the runtime stage"}},
		{name: "no loader", result: "nointerp router-87\n", want: []string{testImage + " lacks its dynamic loader, the dynamic loader router-87 names"}},
		{name: "no CA bundle", result: "rc router-87 0\nrc router-110 0\n", want: []string{testImage + " has no CA bundle at " + CABundlePath}},
		{name: "a linked folder", result: "rc router-87 0\nrc router-110 0\nca\nlink /usr/local/bin\n",
			want: []string{"has /usr/local/bin as a symbolic link: jetbake's layers put a real folder there"}},
		{name: "nothing", result: "", want: []string{"left no exit status"}},
	}
	for _, tt := range tests {
		err := s.Judge(testImage, tt.result, bins, read)
		if len(tt.want) == 0 {
			require.NoError(t, err, tt.name)
			continue
		}
		for _, w := range tt.want {
			require.ErrorContains(t, err, w, tt.name)
		}
	}
}

// The script lists each binary's libraries with its own loader, with the
// driver stub first on the library path, then runs it, and checks every
// folder the layers create, parents included.
func TestSmokeScript(t *testing.T) {
	s := testSpec()
	require.Equal(t, []string{"/etc", "/etc/jetbake", "/usr", "/usr/local", "/usr/local/bin"}, s.LayerDirs())
	script := s.Script([]Binary{{Binary: "router-87", Interpreter: "/lib/ld-linux-aarch64.so.1"}, {Binary: "router-110"}})
	require.Contains(t, script, "export LD_LIBRARY_PATH=/jetbake-smoke-driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n")
	require.Contains(t, script, `if [ -x '/lib/ld-linux-aarch64.so.1' ]; then LD_TRACE_LOADED_OBJECTS=1 '/lib/ld-linux-aarch64.so.1' '/usr/local/bin/router-87' >/jetbake-smoke/router-87.ldd 2>&1; echo "ldd router-87 $?" >>/jetbake-smoke/result; else echo "nointerp router-87" >>/jetbake-smoke/result; fi`)
	require.NotContains(t, script, "router-110.ldd", "a binary that is not an ELF file is only run")
	require.Contains(t, script, `'/usr/local/bin/router-110' "$@" >/jetbake-smoke/router-110.log 2>&1; echo "rc router-110 $?" >>/jetbake-smoke/result`)
	require.Contains(t, script, `[ -L '/usr/local/bin' ] && echo 'link /usr/local/bin' >>/jetbake-smoke/result`)
	require.Contains(t, script, "[ -s "+CABundlePath+" ] && echo ca >>/jetbake-smoke/result")
}

// Where each DT_NEEDED entry resolved, from the loader's trace; the
// driver is the host's.
func TestResolvedLibraries(t *testing.T) {
	trace := "\tlinux-vdso.so.1 (0x0000)\n\tlibcuda.so.1 => /jetbake-smoke-driver/libcuda.so.1 (0x1)\n" +
		"\tlibcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12 (0x2)\n\tlibssl.so.3 => not found\n\tlibc.so.6 => /lib/aarch64-linux-gnu/libc.so.6 (0x3)\n"
	require.Equal(t, []Library{{Name: "libcuda.so.1", FromHost: true}, {Name: "libcudart.so.12", Path: "/usr/local/cuda/lib64/libcudart.so.12"},
		{Name: "libssl.so.3"}, {Name: "libc.so.6", Path: "/lib/aarch64-linux-gnu/libc.so.6"}},
		ResolvedLibraries([]string{"libcuda.so.1", "libcudart.so.12", "libssl.so.3", "libc.so.6"}, trace))
}

// The libraries the audit reads are the image's files the binaries loaded,
// each once: not the driver from the host, not one the loader did not find.
func TestLibraries(t *testing.T) {
	cudart := Library{Name: "libcudart.so.12", Path: "/usr/local/cuda/lib64/libcudart.so.12"}
	bins := []Binary{
		{Binary: "router-87", Resolved: []Library{{Name: "libcuda.so.1", FromHost: true}, cudart, {Name: "libssl.so.3"}}},
		{Binary: "router-110", Resolved: []Library{cudart, {Name: "libc.so.6", Path: "/lib/aarch64-linux-gnu/libc.so.6"}}},
		{Binary: "script"},
	}
	require.Equal(t, []string{"/usr/local/cuda/lib64/libcudart.so.12", "/lib/aarch64-linux-gnu/libc.so.6"}, Libraries(bins))
	require.Empty(t, Libraries(nil))
}
