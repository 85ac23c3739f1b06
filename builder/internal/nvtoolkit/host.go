package nvtoolkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/computecap"
)

// CSVFolder is where a Jetson keeps the runtime's CSV files; the fake hosts
// keep them at the same path under their root.
const CSVFolder = "/etc/nvidia-container-runtime/host-files-for-container.d"

// HostSpec is a Jetson to lay out: what its files say and what its driver
// answers.
type HostSpec struct {
	// Name names the host, such as "orin-jp6".
	Name string
	// L4T is its Jetson Linux release, such as "36.4.3".
	L4T string
	// SocID, SocFamily and Machine are /sys/devices/soc0's soc_id,
	// family ("Tegra") and machine.
	SocID     int
	SocFamily string
	Machine   string
	// GPU and DriverCUDA are what its libcuda answers (compute capability,
	// cuDriverGetVersion).
	GPU        computecap.Capability
	DriverCUDA computecap.CUDAVersion
	// UnloadableDriver puts a libcuda that an aarch64 program cannot load
	// (the x86-64 build) at the driver's path: a host whose driver is broken.
	UnloadableDriver bool
	// Without leaves workarounds out (workarounds.go), for the test that
	// shows what each one prevents.
	Without []Workaround
}

// Host is a fake Jetson laid out under Dir as NVIDIA's runtime reads one:
// Root is its / for the runtime (nvidia-container-cli.root, the driver and
// device root: nv_tegra_release, the CSV files, the libraries and links they
// list, the device nodes made with mknod); SysDevices is its
// /sys/devices/soc0 view, which a container sees of the real host and which
// the runs here bind-mount, since a container's /sys is this machine's.
type Host struct {
	HostSpec
	// Line is the host's JetPack line and GPUFamily its GPU's family in
	// the table of Jetson facts ("Orin").
	Line      Line
	GPUFamily string
	// Dir holds everything of the host; Root and SysDevices are in it.
	Dir, Root, SysDevices string
	// Libcuda is where libcuda.so.1 is, on the host and in the container.
	Libcuda string
	// Devices are the device nodes the host has.
	Devices []string
	// X86Driver is the folder of the host's libcuda.so.1 built for this
	// machine, which the runtime loads in its own process to check
	// NVIDIA_REQUIRE_CUDA (a Jetson's runtime loads the host's driver).
	X86Driver string
}

// writeHost lays out spec under dir, its ELF stand-ins built in cache.
func writeHost(ctx context.Context, dir, cache string, spec HostSpec) (*Host, error) {
	l4t, err := computecap.ParseL4TVersion(spec.L4T)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", spec.Name, err)
	}
	line, ok := LineOf(l4t.Major)
	if !ok {
		return nil, fmt.Errorf("host %s: no CSV table for L4T R%d: add its JetPack line to jetpack.go", spec.Name, l4t.Major)
	}
	soc, ok := computecap.DefaultTable().SoCByCapability(spec.GPU)
	if !ok {
		return nil, fmt.Errorf("host %s: GPU %s is not a Jetson's", spec.Name, spec.GPU)
	}
	h := &Host{HostSpec: spec, Line: line, GPUFamily: soc.Family, Dir: dir,
		Root: filepath.Join(dir, "root"), SysDevices: filepath.Join(dir, "sys", "devices"),
		X86Driver: filepath.Join(dir, "x86")}
	h.Libcuda, h.Devices = line.Libcuda(soc.Family), line.Devices(soc.Family)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	steps := []func() error{
		func() error { return h.writeFiles() },
		func() error { return h.writeRows(ctx, cache) },
		func() error { return h.writeX86Driver(ctx, cache) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("host %s: %w", spec.Name, err)
		}
	}
	return h, nil
}

// writeFiles writes nv_tegra_release, the CSV files and the soc0 view.
func (h *Host) writeFiles() error {
	files := map[string]string{
		filepath.Join(h.Root, tegraReleaseRow):            standin.TegraRelease(h.L4T),
		filepath.Join(h.SysDevices, "soc0", "family"):     h.SocFamily + "\n",
		filepath.Join(h.SysDevices, "soc0", "soc_id"):     strconv.Itoa(h.SocID) + "\n",
		filepath.Join(h.SysDevices, "soc0", "machine"):    h.Machine + "\n",
		filepath.Join(h.Dir, "cdi", ".keep"):              "",
		filepath.Join(h.Root, CSVFolder, ".jetbake-fake"): "a fake host: builder/internal/nvtoolkit\n",
	}
	for _, f := range h.csvFiles() {
		files[filepath.Join(h.Root, CSVFolder, f.Name)] = f.Text()
	}
	for path, data := range files {
		if err := writeFile(path, []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeRows makes what the host has of each CSV row: the stand-in driver and
// other libraries, the links, the device nodes and folders.
func (h *Host) writeRows(ctx context.Context, cache string) error {
	for _, f := range h.Line.Files {
		for _, r := range f.Rows {
			if !r.present(h.GPUFamily) {
				continue
			}
			if err := h.writeRow(ctx, cache, r); err != nil {
				return fmt.Errorf("%s row %s, %s: %w", f.Name, r.Kind, r.Path, err)
			}
		}
	}
	return nil
}

// writeRow makes one row's path under the root.
func (h *Host) writeRow(ctx context.Context, cache string, r Row) error {
	path := filepath.Join(h.Root, r.Path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	switch r.Kind {
	case "lib":
		src, err := h.library(ctx, cache, r)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return writeFile(path, data, 0o644)
	case "sym":
		return os.Symlink(r.Target, path)
	case "dev":
		// 1:3 is /dev/null's, so a program in the container can open it;
		// major<<8|minor is the kernel's encoding of numbers this small.
		return syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3)
	case "dir":
		return os.MkdirAll(path, 0o755)
	}
	return fmt.Errorf("unknown kind %q: want lib, sym, dev or dir", r.Kind)
}

// library is the ELF file of a lib row: the host's stand-in driver for the
// driver's row, an empty shared object with the file's name as soname else.
func (h *Host) library(ctx context.Context, cache string, r Row) (string, error) {
	if !r.Driver {
		return standin.BuildSharedObject(ctx, cache, standin.ARM64, filepath.Base(r.Path))
	}
	arch := standin.ARM64
	if h.UnloadableDriver {
		arch = standin.AMD64
	}
	return standin.BuildLibcuda(ctx, cache, h.driver(arch))
}

// driver is the host's stand-in driver for arch.
func (h *Host) driver(arch standin.Arch) standin.Driver {
	return standin.Driver{Arch: arch, GPU: h.GPU, CUDA: h.DriverCUDA, DeviceName: h.GPUFamily}
}

// writeX86Driver puts the host's driver built for this machine in X86Driver.
func (h *Host) writeX86Driver(ctx context.Context, cache string) error {
	src, err := standin.BuildLibcuda(ctx, cache, h.driver(standin.AMD64))
	if err != nil {
		return err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(h.X86Driver, "libcuda.so.1"), data, 0o755)
}

// writeFile writes data at path, making its folder.
func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		return errors.Join(err, os.Remove(path))
	}
	return nil
}
