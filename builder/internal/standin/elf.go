package standin

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// Arch is a CPU architecture the ELF stand-ins are built for, named as GOARCH names it.
type Arch string

// The architectures: the building machine's and the Jetson's.
const (
	AMD64 Arch = "amd64"
	ARM64 Arch = "arm64"
)

// compiler is the C compiler for a: the machine's gcc, or Debian's
// gcc-aarch64-linux-gnu, which `make deps` installs.
func (a Arch) compiler() (string, error) {
	var name string
	switch a {
	case AMD64:
		name = "gcc"
	case ARM64:
		name = "aarch64-linux-gnu-gcc"
	default:
		return "", fmt.Errorf("stand-in ELF: unknown architecture %q: use amd64 or arm64", a)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not installed: run 'make deps' as root (apt-get install gcc gcc-aarch64-linux-gnu libc6-dev-arm64-cross)", name)
	}
	return path, nil
}

//go:embed cuda/libcuda.c
var libcudaSource []byte

// Driver is one build of the stand-in CUDA driver, libcuda.so.1
// (cuda/libcuda.c): a host's driver with its answers compiled in, or
// CUDA's link-time stub.
type Driver struct {
	// Arch is the architecture it is built for.
	Arch Arch
	// Stub builds CUDA's stub (stubs/libcuda.so): every call fails with
	// CUDA_ERROR_STUB_LIBRARY.
	Stub bool
	// GPU is the compute capability the device reports; zero means 8.7.
	GPU computecap.Capability
	// CUDA is what cuDriverGetVersion reports; zero means 12.6.
	CUDA computecap.CUDAVersion
	// DeviceName is what cuDeviceGetName reports; empty means "Orin".
	DeviceName string
	// OmitDriverVersion leaves cuDriverGetVersion out: a library that is not a driver.
	OmitDriverVersion bool
}

// defines are the -D flags that compile d's answers in.
func (d Driver) defines() []string {
	var flags []string
	if d.Stub {
		flags = append(flags, "-DJB_STUB")
	}
	if d.GPU != (computecap.Capability{}) {
		flags = append(flags, "-DJB_CC_MAJOR="+strconv.Itoa(d.GPU.Major), "-DJB_CC_MINOR="+strconv.Itoa(d.GPU.Minor))
	}
	if !d.CUDA.IsZero() {
		flags = append(flags, "-DJB_DRIVER_VERSION="+strconv.Itoa(d.CUDA.Major*1000+d.CUDA.Minor*10))
	}
	if d.DeviceName != "" {
		flags = append(flags, "-DJB_DEVICE_NAME="+strconv.Quote(d.DeviceName))
	}
	if d.OmitDriverVersion {
		flags = append(flags, "-DOMIT_DRIVER_VERSION")
	}
	return flags
}

// BuildLibcuda compiles the stand-in driver d into cacheDir and returns the
// path of its libcuda.so.1, a shared object with that soname. A build with
// the same source, compiler and flags is reused.
func BuildLibcuda(ctx context.Context, cacheDir string, d Driver) (string, error) {
	return buildShared(ctx, cacheDir, d.Arch, "libcuda.so.1", libcudaSource, d.defines())
}

// emptySource is the body of a stand-in library that only has to exist
// with its soname, for a program's DT_NEEDED entry to resolve.
const emptySource = "int jetbake_standin_library;\n"

// BuildSharedObject compiles an empty shared object with the given soname
// (libssl.so.3, libcublas.so.12, ...) for arch into cacheDir and returns its
// path: enough for the dynamic loader to satisfy a DT_NEEDED entry, as the
// real library would.
func BuildSharedObject(ctx context.Context, cacheDir string, arch Arch, soname string) (string, error) {
	if soname == "" || strings.ContainsAny(soname, "/ \x00") {
		return "", fmt.Errorf("stand-in library: %q is not a soname such as libssl.so.3", soname)
	}
	return buildShared(ctx, cacheDir, arch, soname, []byte(emptySource), nil)
}

// buildShared compiles source with flags into a shared object named soname.
func buildShared(ctx context.Context, cacheDir string, arch Arch, soname string, source []byte, flags []string) (string, error) {
	args := append([]string{"-shared", "-fPIC", "-fvisibility=hidden", "-O2", "-Wall", "-Wextra", "-Werror",
		"-Wl,-soname," + soname, "-Wl,--build-id=none"}, flags...)
	return buildC(ctx, cacheDir, arch, soname, source, args)
}

// buildC compiles source with args into cacheDir/KEY/name, KEY being a
// hash of everything that goes into the build.
func buildC(ctx context.Context, cacheDir string, arch Arch, name string, source []byte, args []string) (string, error) {
	cc, err := arch.compiler()
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%s\x00", arch, name, strings.Join(args, "\x00"))
	sum.Write(source)
	key := hex.EncodeToString(sum.Sum(nil))[:20]
	out := filepath.Join(cacheDir, key, name)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, ".build-")
	if err != nil {
		if err := os.MkdirAll(cacheDir, 0o755); err != nil {
			return "", err
		}
		if tmp, err = os.MkdirTemp(cacheDir, ".build-"); err != nil {
			return "", err
		}
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "source.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	built := filepath.Join(tmp, name)
	cmd := exec.CommandContext(ctx, cc, append(args, "-o", built, src)...)
	if outb, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("compile stand-in %s for %s: %w: %s", name, arch, err, outb)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	// Another build may have finished first: either copy is the same.
	if err := os.Rename(built, out); err != nil && !errors.Is(err, os.ErrExist) {
		if _, statErr := os.Stat(out); statErr != nil {
			return "", err
		}
	}
	return out, nil
}
