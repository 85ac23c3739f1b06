package standin

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/computecap"
)

// realKit is the kit `make deps` prepares: Debian's arm64 busybox and
// glibc, so that the stand-ins' scripts run (through QEMU).
func realKit(t *testing.T) Kit {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the stand-ins through QEMU under chroot, as root: runs without -short (make test)")
	}
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	deps := filepath.Join(root, "bin", "deps")
	k := Kit{Busybox: filepath.Join(deps, "busybox-arm64", "bin", "busybox"), Glibc: filepath.Join(deps, "glibc-arm64"),
		Cache: filepath.Join(root, "bin", "standin"), Source: root}
	for _, p := range []string{k.Busybox, filepath.Join(k.Glibc, "sbin", "ldconfig")} {
		_, err := os.Stat(p)
		require.NoError(t, err, "run 'make deps' as root: it fetches Debian's arm64 busybox and glibc")
	}
	_, err = os.Stat("/proc/sys/fs/binfmt_misc/qemu-aarch64")
	require.NoError(t, err, "run 'make deps' as root: it registers QEMU for aarch64")
	require.Equal(t, 0, os.Geteuid(), "the stand-ins' scripts run under chroot, which needs root (make test runs as root)")
	return k
}

// unpacked writes b's stand-in under a temporary folder.
func unpacked(t *testing.T, k Kit, b Base) string {
	t.Helper()
	img, err := k.Image(t.Context(), b)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "rootfs")
	require.NoError(t, runimage.Unpack(img, dir))
	return dir
}

// inImage runs a shell command in the unpacked image root, as a RUN step
// would, and returns its output and exit status.
func inImage(t *testing.T, root, script string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("chroot", root, "/bin/sh", "-c", script)
	cmd.Env = append([]string{"PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}, env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil {
		require.ErrorAs(t, err, &exit, string(out))
		return string(out), exit.ExitCode()
	}
	return string(out), 0
}

// apt-get behaves as on a fresh image: nothing to install before an
// update, apt's own sentence for an unknown package, no install without
// -y; installing puts the files in place, and what the base has is
// already installed.
func TestStandinAptGet(t *testing.T) {
	k := realKit(t)
	root := unpacked(t, k, Base{Ref: l4tCUDABase, CUDA: "12.6", Flavour: computecap.FlavourTegra, Ubuntu: "22.04",
		Libs: runtimeLibs})
	out, code := inImage(t, root, "apt-get install -y libssl3")
	require.Equal(t, 100, code, out)
	require.Contains(t, out, "E: Unable to locate package libssl3", "no lists before apt-get update")

	out, code = inImage(t, root, "apt-get update && apt-get install -y --no-install-recommends ca-certificates libssl3 nope zilch")
	require.Equal(t, 100, code, out)
	require.Contains(t, out, "E: Unable to locate package nope\nE: Unable to locate package zilch")

	out, code = inImage(t, root, "apt-get install libssl3")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "Do you want to continue? [Y/n] Abort.")

	out, code = inImage(t, root, "apt-get install -y ca-certificates libssl3 cuda-cudart-12-6 libcublas-12-6 && ls /usr/lib/aarch64-linux-gnu /etc/ssl/certs /usr/local/cuda/lib64/")
	require.Equal(t, 0, code, out)
	for _, f := range []string{"libssl.so.3", "libcrypto.so.3", "ca-certificates.crt", "libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12"} {
		require.Contains(t, out, f)
	}
	out, code = inImage(t, root, "apt-get install -y libssl3")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "libssl3 is already the newest version")
	out, code = inImage(t, root, "rm -rf /var/lib/apt/lists/* && apt-get install -y curl")
	require.Equal(t, 100, code, "the lists removed, as Dockerfiles do: %s", out)

	noble := unpacked(t, k, Base{Ref: cudaRuntime, CUDA: "13.2", Flavour: computecap.FlavourSBSA, Ubuntu: "24.04", Libs: runtimeLibs})
	out, code = inImage(t, noble, ". /etc/os-release && echo $VERSION_ID && apt-get update >/tmp/out && apt-get install -y libssl3t64 && apt-get install -y libssl3")
	require.Equal(t, 100, code, out)
	require.Contains(t, out, "24.04")
	require.Contains(t, out, "E: Unable to locate package libssl3", "Ubuntu 24.04 names it libssl3t64")
}

// The build base's toolchain: curl serves only the rustup installer,
// which needs -y; rustup installs the pinned toolchain, which the stand-in
// cargo needs; cargo installs only sccache offline.
func TestStandinToolchain(t *testing.T) {
	k := realKit(t)
	root := unpacked(t, k, Base{Ref: jetpackBase, L4T: "36.4.0", CUDA: "12.6", Flavour: computecap.FlavourTegra, Devel: true,
		Ubuntu: "22.04", Libs: UbuntuLibs("22.04"), CABundle: true})
	out, code := inImage(t, root, "curl -sSf https://sh.rustup.rs")
	require.Equal(t, 127, code, "curl comes with apt-get install curl: %s", out)
	_, code = inImage(t, root, "apt-get update >/tmp/out && apt-get install -qq curl >/tmp/out")
	require.Equal(t, 0, code)
	out, code = inImage(t, root, "curl -sSf https://example.com/x.tar.gz")
	require.Equal(t, 6, code)
	require.Equal(t, "curl: (6) Could not resolve host: example.com\n", out)
	out, code = inImage(t, root, "curl -s https://example.com/x")
	require.Equal(t, 6, code)
	require.Empty(t, out, "-s without -S says nothing")
	out, code = inImage(t, root, "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- --profile minimal")
	require.Equal(t, 1, code)
	require.Contains(t, out, "Unable to run interactively. Run with -y")

	env := []string{"RUSTUP_HOME=/usr/local/rustup", "CARGO_HOME=/usr/local/cargo"}
	out, code = inImage(t, root, "mkdir -p /src && cd /src && printf '[toolchain]\\nchannel = \"1.92.0\"\\n' >rust-toolchain.toml && "+
		"curl -sSf https://sh.rustup.rs | sh -s -- -y --default-toolchain none && cargo --version", env...)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "error: toolchain '1.92.0-aarch64-unknown-linux-gnu' is not installed")
	out, code = inImage(t, root, "cd /src && rustup toolchain install && cargo --version && cargo install sccache --locked --version 0.8.2 && sccache --version", env...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "cargo 1.92.0 (jetbake stand-in)")
	require.Contains(t, out, "Installed package `sccache v0.8.2` (executable `sccache`)")
	out, code = inImage(t, root, "cd /src && cargo install cargo-chef", env...)
	require.Equal(t, 101, code)
	require.Contains(t, out, "Could not resolve host: index.crates.io")

	for template, needed := range map[string][]string{
		"static":       RouterNeeds("22.04", "12.6", tei.TemplateKind{Linking: tei.LinkStatic}),
		"static-flash": RouterNeeds("22.04", "12.6", tei.TemplateKind{Linking: tei.LinkStatic, FlashAttn: true}),
		"dynamic":      RouterNeeds("22.04", "12.6", tei.TemplateKind{Linking: tei.LinkDynamic}),
		"cpu":          RouterNeeds("22.04", "12.6", tei.TemplateKind{}),
	} {
		f, err := elf.Open(filepath.Join(root, tei.TemplatePath(template)))
		require.NoError(t, err, template)
		libs, err := f.ImportedLibraries()
		require.NoError(t, err)
		require.Equal(t, append(needed, "libc.so.6"), libs, "the %s router's DT_NEEDED", template)
		syms, err := f.ImportedSymbols()
		require.NoError(t, err)
		require.Equal(t, template != "cpu", slices.ContainsFunc(syms, func(s elf.ImportedSymbol) bool { return s.Name == "cuInit" }),
			"the %s router calls the driver's cuInit (built with -tags cuda)", template)
		require.Equal(t, elf.EM_AARCH64, f.Machine)
		f.Close()
	}
	dynamic := tei.TemplateKind{Linking: tei.LinkDynamic}
	require.Contains(t, RouterNeeds("22.04", "12.6", dynamic), "libcublasLt.so.12")
	require.Contains(t, RouterNeeds("20.04", "11.4", dynamic), "libnvrtc.so.11.2")
	require.Contains(t, RouterNeeds("24.04", "13.0", dynamic), "libcudart.so.13")
	// candle-flash-attn links libcudart of the CUDA major whatever cudarc does.
	flash := tei.TemplateKind{Linking: tei.LinkStatic, FlashAttn: true}
	require.Equal(t, []string{"libcuda.so.1", "libcudart.so.12", "libssl.so.3", "libcrypto.so.3", "libgcc_s.so.1", "libstdc++.so.6"}, RouterNeeds("22.04", "12.6", flash))
	require.Contains(t, RouterNeeds("20.04", "11.4", flash), "libcudart.so.11.0")
	require.Contains(t, RouterNeeds("24.04", "13.0", flash), "libcudart.so.13")
	require.NotContains(t, RouterNeeds("24.04", "13.0", tei.TemplateKind{Linking: tei.LinkStatic}), "libcudart.so.13", "candle-cuda-volta has no flash attention")
	out, code = inImage(t, root, "/usr/local/cuda/bin/nvcc --list-gpu-code")
	require.Equal(t, 0, code, out)
	require.Equal(t, "sm_50\nsm_52\nsm_53\nsm_60\nsm_61\nsm_62\nsm_70\nsm_72\nsm_75\nsm_80\nsm_86\nsm_87\nsm_89\nsm_90\n", out,
		"CUDA 12.6's nvcc, from the facts table")
	cargo, err := elf.Open(filepath.Join(root, tei.StandinDir, "cargo", "cargo"))
	require.NoError(t, err)
	_, err = cargo.DynamicSymbols()
	require.Error(t, err, "the stand-in cargo is static")
	cargo.Close()
}

// A base whose CUDA is elsewhere: CUDA_ROOT names it, /usr/local/cuda is not there.
func TestImageCUDARoot(t *testing.T) {
	kit := testKit(t)
	img, err := kit.Image(t.Context(), Base{Ref: jetpackBase, CUDA: "12.6", Flavour: computecap.FlavourTegra, Devel: true,
		CUDARoot: "/opt/nvidia/cuda-12.6", Ubuntu: "22.04"})
	require.NoError(t, err)
	fs := files(t, img)
	require.Contains(t, fs, "opt/nvidia/cuda-12.6/targets/aarch64-linux/lib/stubs/libcuda.so")
	require.Contains(t, fs, "opt/nvidia/cuda-12.6/include/cuda.h")
	_, ok := fs["usr/local/cuda"]
	require.False(t, ok)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Contains(t, cf.Config.Env, "CUDA_ROOT=/opt/nvidia/cuda-12.6")
	require.True(t, strings.HasPrefix(fs["etc/os-release"].data, "NAME=\"Ubuntu\"\nID=ubuntu\n"))
}
