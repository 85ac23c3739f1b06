package eptest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// The parts `make deps` unpacks into bin/deps (builder/internal/tools/deps.sh;
// builder/internal/nvreal finds the same files for the builder's tests):
// Debian's arm64 glibc, and NVIDIA's arm64 driver user space 535 from
// Debian's non-free component, laid out as Debian installs it.
const (
	glibcDeps      = "glibc-arm64"
	driverDeps     = "nvidia-driver-arm64"
	driverLibDir   = "usr/lib/aarch64-linux-gnu/nvidia/current"
	driverSmi      = "usr/lib/nvidia/current/nvidia-smi"
	makeDepsAdvice = ": run 'make deps' as root (it fetches NVIDIA's driver 535 and Debian's arm64 glibc)"
)

// RealDriverLib is where RealDriverRoot puts NVIDIA's libraries: JetPack
// 6's driver folder, where the CSV runtime mounts libcuda.so.1 and the PTX
// JIT compiler.
const RealDriverLib = "/usr/lib/aarch64-linux-gnu/nvidia"

// RealOptions say what a RealDriverRoot holds besides glibc and the host.
type RealOptions struct {
	// Image is a testdata/images name for /etc/jetbake/image.json; "" for none.
	Image string
	// NoLibcuda leaves libcuda.so.1 out (the NVML library and the PTX
	// JIT compiler stay).
	NoLibcuda bool
	// NvidiaSmi installs NVIDIA's nvidia-smi as /usr/bin/nvidia-smi.
	NvidiaSmi bool
	// NVMLInCache lists RealDriverLib in /etc/ld.so.conf.d and runs the
	// root's own ldconfig, as the NVIDIA runtime's update-ldcache hook
	// does: libnvidia-ml.so.1 is then found by its name.
	NVMLInCache bool
	// NoNodes removes the host's GPU device nodes.
	NoNodes bool
}

// RealDriverRoot is a linux/arm64 root to chroot into: Debian's arm64 glibc,
// the host testdata/hosts/<hostName>, /dev/null, NVIDIA's real driver
// libraries in RealDriverLib, and the arm64 entrypoint, jetbake-cudaprobe and
// jetbake-probe in /usr/local/bin, as an image holds them. It has no GPU
// device: NVIDIA's files run through QEMU's binfmt handler. The large files
// are hard links to bin/deps, never written. A missing part fails the test
// with "run make deps".
func RealDriverRoot(t testing.TB, hostName string, opts RealOptions) string {
	t.Helper()
	requireRoot(t)
	deps := RepoPath("bin", "deps")
	for _, p := range []string{filepath.Join(glibcDeps, "lib", "ld-linux-aarch64.so.1"), filepath.Join(driverDeps, driverLibDir, "libcuda.so.1"),
		filepath.Join(driverDeps, driverSmi)} {
		_, err := os.Stat(filepath.Join(deps, p))
		require.NoError(t, err, "the test bed lacks %s%s", p, makeDepsAdvice)
	}
	root := t.TempDir()
	LinkTree(t, filepath.Join(deps, glibcDeps), root)
	CopyTree(t, Testdata("hosts", hostName), root)
	if opts.NoNodes {
		require.NoError(t, os.RemoveAll(filepath.Join(root, "dev")))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
	require.NoError(t, syscall.Mknod(filepath.Join(root, "dev", "null"), syscall.S_IFCHR|0o666, 1<<8|3), "/dev/null in the root")
	LinkTree(t, filepath.Join(deps, driverDeps, driverLibDir), filepath.Join(root, RealDriverLib))
	if opts.NoLibcuda {
		matches, err := filepath.Glob(filepath.Join(root, RealDriverLib, "libcuda.so*"))
		require.NoError(t, err)
		for _, m := range matches {
			require.NoError(t, os.Remove(m))
		}
	}
	if opts.NvidiaSmi {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755))
		require.NoError(t, os.Link(filepath.Join(deps, driverDeps, driverSmi), filepath.Join(root, "usr", "bin", "nvidia-smi")))
	}
	if opts.NVMLInCache {
		WriteFile(t, root, "/etc/ld.so.conf.d/nvidia-tegra.conf", RealDriverLib+"\n", 0o644)
		code, out, errOut := RunChroot(t, root, nil, "/sbin/ldconfig")
		require.Equal(t, 0, code, "ldconfig in the root: %s%s", out, errOut)
	}
	if opts.Image != "" {
		data, err := os.ReadFile(Testdata("images", opts.Image+".json"))
		require.NoError(t, err)
		WriteFile(t, root, imagespec.Path, string(data), 0o644)
	}
	b := BuildARM64(t)
	for _, p := range []string{b.Entrypoint, b.CUDAProbe, b.Probe} {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		WriteFile(t, root, "/usr/local/bin/"+filepath.Base(p), string(data), 0o755)
	}
	return root
}

// requireRoot fails a test that needs chroot and mknod when not run as
// root, as `make test` is.
func requireRoot(t testing.TB) {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "chroot and mknod need root: run the tests as root, as 'make test' does")
}

// RunChroot runs argv in root with env (and nothing else) and returns its
// exit status, stdout and stderr. An aarch64 program runs through the
// binfmt handler that `make deps` registers for QEMU (with its F flag, so
// that it works inside the chroot).
func RunChroot(t testing.TB, root string, env []string, argv ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	cmd.Dir = "/"
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	require.NoError(t, err, "running %v in %s (is QEMU's aarch64 binfmt handler registered? run 'make deps' as root)", argv, root)
	return 0, stdout.String(), stderr.String()
}

// LinkTree recreates src under dst: folders made, symbolic links copied as
// links, regular files hard-linked (copied when dst is on another file
// system).
func LinkTree(t testing.TB, src, dst string) {
	t.Helper()
	require.NoError(t, walkTree(src, dst, true))
}

// BuildARM64 builds the entrypoint, jetbake-cudaprobe and jetbake-probe for
// linux/arm64 (CGO_ENABLED=0, as released) into one folder, once per test
// binary; Main removes them. Libcuda and Stub are empty: the arm64 tests
// use NVIDIA's driver.
func BuildARM64(t testing.TB) Binaries {
	t.Helper()
	return arm64Set.get(t, func() (Binaries, error) {
		return buildSet("jetbake-entrypoint-arm64-", "arm64", func(*Binaries) [][]string { return nil })
	})
}
