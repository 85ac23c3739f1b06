package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/jetbake/jetbake/builder/internal/nvtoolkit"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/computecap"
)

// FakeHost is a Jetson as `docker run --runtime nvidia` shows it to a
// container (NVIDIA's runtime in CSV mode): the device tree masked (Docker
// masks /sys/firmware), /sys/devices/soc0 (family, soc_id, machine)
// visible, the runtime's /etc/nv_tegra_release, the GPU device nodes its
// JetPack line's CSV files list (nvtoolkit's table of the line, the rows
// its GPU family has), and the host's CUDA driver, libcuda.so.1, at its
// JetPack's driver folder, findable by the loader.
// The driver is the stand-in libcuda (builder/internal/standin/cuda) built
// for this host, GPU and DriverCUDA compiled in, as a real driver belongs
// to its host; its FAKE_CUDA_* variables are left for injecting failures.
type FakeHost struct {
	// Name labels the host in reports.
	Name string
	// L4T is the host's Jetson Linux version, e.g. "36.4.3"; empty for none.
	L4T string
	// SocID is /sys/devices/soc0/soc_id.
	SocID int
	// Machine is /sys/devices/soc0/machine, the device tree's model.
	Machine string
	// GPU is the compute capability the driver reports, DeviceName its name.
	GPU        computecap.Capability
	DeviceName string
	// DriverCUDA is the CUDA version cuDriverGetVersion reports.
	DriverCUDA computecap.CUDAVersion
	// NoDriver leaves libcuda out, as when the runtime's CSV lists miss it
	// (it only warns).
	NoDriver bool
	// NoNodes leaves the GPU device nodes out: the driver's libraries and
	// the release file are there, as when the driver's folder is
	// bind-mounted by hand or the CSV files list no device node.
	NoNodes bool
	// Declared are the rows a matrix declares for a host on a JetPack
	// release jetbake's table lacks (DeclaredHostViews): where its driver
	// lives comes from them.
	Declared computecap.Facts
}

// Board names as /sys/devices/soc0/machine shows them.
const (
	orinNanoSuper = "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
	agxOrin       = "NVIDIA Jetson AGX Orin Developer Kit"
	agxThor       = "NVIDIA Jetson AGX Thor Developer Kit"
	agxXavier     = "NVIDIA Jetson AGX Xavier Developer Kit"
)

// NoNodesHost is the Orin on JetPack 6.2 whose container has the driver's
// libraries and release file but no GPU device node.
const NoNodesHost = "orin-jp6-no-nodes"

// hosts are the fake hosts the checks run on, one per release line:
// R35 (Orin and Xavier), R36.3, R36.4.x, R38.2, R38.4 and R39.2, a
// Jetson whose runtime did not mount the driver, and one whose container
// has the driver but no device node. "none" (added by
// WriteHosts) is a container started without the NVIDIA runtime on this
// (GPU-less) machine.
var hosts = []FakeHost{
	{Name: "orin-jp5.1.2", L4T: "35.4.1", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DeviceName: "Orin", DriverCUDA: cuda(11, 4)},
	{Name: "xavier-jp5.1.2", L4T: "35.4.1", SocID: 25, Machine: agxXavier, GPU: sm(7, 2), DeviceName: "Xavier", DriverCUDA: cuda(11, 4)},
	{Name: "orin-jp6.0", L4T: "36.3.0", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DeviceName: "Orin", DriverCUDA: cuda(12, 2)},
	{Name: "orin-jp6", L4T: "36.4.3", SocID: 35, Machine: orinNanoSuper, GPU: sm(8, 7), DeviceName: "Orin", DriverCUDA: cuda(12, 6)},
	{Name: "orin-jp6.2.1", L4T: "36.4.7", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DeviceName: "Orin", DriverCUDA: cuda(12, 6)},
	{Name: "orin-jp6-no-driver", L4T: "36.4.3", SocID: 35, Machine: orinNanoSuper, GPU: sm(8, 7), DriverCUDA: cuda(12, 6), NoDriver: true},
	{Name: NoNodesHost, L4T: "36.4.3", SocID: 35, Machine: orinNanoSuper, GPU: sm(8, 7), DeviceName: "Orin", DriverCUDA: cuda(12, 6), NoNodes: true},
	{Name: "orin-jp7.2", L4T: "39.2.0", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DeviceName: "Orin", DriverCUDA: cuda(13, 2)},
	{Name: "thor-jp7.0", L4T: "38.2.0", SocID: 38, Machine: agxThor, GPU: sm(11, 0), DeviceName: "NVIDIA Thor", DriverCUDA: cuda(13, 0)},
	{Name: "thor-jp7.1", L4T: "38.4.0", SocID: 38, Machine: agxThor, GPU: sm(11, 0), DeviceName: "NVIDIA Thor", DriverCUDA: cuda(13, 0)},
	{Name: "thor-jp7.2", L4T: "39.2.0", SocID: 38, Machine: agxThor, GPU: sm(11, 0), DeviceName: "NVIDIA Thor", DriverCUDA: cuda(13, 2)},
}

func sm(major, minor int) computecap.Capability {
	return computecap.Capability{Major: major, Minor: minor}
}

func cuda(major, minor int) computecap.CUDAVersion {
	return computecap.CUDAVersion{Major: major, Minor: minor}
}

// csvDir is where NVIDIA's runtime reads a Tegra host's CSV lists.
const csvDir = "etc/nvidia-container-runtime/host-files-for-container.d"

// WriteHosts lays out every fake host (HostViews, then the declared
// JetPack 7.3's DeclaredHostViews) under dir, their stand-in drivers
// compiled into cacheDir, and returns them by name, with "none" added.
func WriteHosts(ctx context.Context, cacheDir, dir string) (map[string]runimage.Host, error) {
	out := map[string]runimage.Host{"none": {Name: "none"}}
	for _, h := range append(HostViews(), DeclaredHostViews()...) {
		host, err := h.write(ctx, cacheDir, filepath.Join(dir, h.Name))
		if err != nil {
			return nil, fmt.Errorf("fake host %s: %w", h.Name, err)
		}
		out[h.Name] = host
	}
	return out, nil
}

// DriverDir is the folder of the host's libcuda: its JetPack's for its
// SoC, from the table of Jetson facts with the host's declared rows ("" when
// neither knows its L4T or its soc_id).
func (h FakeHost) DriverDir() string {
	v, err := computecap.ParseL4TVersion(h.L4T)
	if err != nil {
		return ""
	}
	t, probs := computecap.DefaultTable().Declare(h.Declared)
	if len(probs) > 0 {
		return ""
	}
	rel, ok := t.ReleaseForL4T(v)
	soc, known := t.SoCByID(h.SocID)
	if !ok || !known {
		return ""
	}
	return rel.DriverDirFor(soc.Family)
}

// write lays out the host's files under root as the runtime's driver root
// holds them (soc0, the L4T release file, the driver library and the CSV
// list that names it, the CPU's /proc/cpuinfo when the table knows it), no
// device tree, and returns the host as runimage runs containers on it.
func (h FakeHost) write(ctx context.Context, cacheDir, root string) (runimage.Host, error) {
	files := map[string][]byte{
		"sys/devices/soc0/family":  []byte("Tegra\n"),
		"sys/devices/soc0/soc_id":  []byte(strconv.Itoa(h.SocID) + "\n"),
		"sys/devices/soc0/machine": []byte(h.Machine + "\n"),
	}
	if h.L4T != "" {
		files["etc/nv_tegra_release"] = []byte(standin.TegraRelease(h.L4T))
	}
	host := runimage.Host{Name: h.Name, Root: root}
	if info := h.cpuinfo(); info != "" {
		files["proc/cpuinfo"] = []byte(info)
		host.CPUInfo = filepath.Join(root, "proc", "cpuinfo")
	}
	if dir := h.DriverDir(); dir != "" && !h.NoDriver {
		lib, err := standin.BuildLibcuda(ctx, cacheDir, standin.Driver{Arch: standin.ARM64, GPU: h.GPU, CUDA: h.DriverCUDA, DeviceName: h.DeviceName})
		if err != nil {
			return runimage.Host{}, err
		}
		data, err := os.ReadFile(lib)
		if err != nil {
			return runimage.Host{}, err
		}
		path := dir + "/libcuda.so.1.1"
		files[strings.TrimPrefix(path, "/")] = data
		files[csvDir+"/drivers.csv"] = []byte("lib, " + path + "\nsym, " + dir + "/libcuda.so.1\n")
		host.Libs = []runimage.HostLib{{Source: filepath.Join(root, path), Path: path, Links: []string{"libcuda.so.1"}}}
	}
	for name, data := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return runimage.Host{}, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return runimage.Host{}, err
		}
	}
	var err error
	if host.Devices, err = h.writeDevices(root); err != nil {
		return runimage.Host{}, err
	}
	return host, nil
}

// Devices are the GPU device nodes the host's runtime puts in a container:
// the "dev" rows of its JetPack line's CSV files (nvtoolkit.Line, the
// table the test bed's runs through NVIDIA's runtime read) that its GPU
// family has; none with NoNodes or without a known line and SoC.
func (h FakeHost) Devices() []string {
	v, err := computecap.ParseL4TVersion(h.L4T)
	if err != nil || h.NoNodes {
		return nil
	}
	line, ok := nvtoolkit.LineOf(v.Major)
	soc, known := computecap.DefaultTable().SoCByID(h.SocID)
	if !ok || !known {
		return nil
	}
	return line.Devices(soc.Family)
}

// writeDevices makes the host's device nodes under root, character devices
// 1:3 as runimage.Host.Devices says, and returns their paths.
func (h FakeHost) writeDevices(root string) ([]string, error) {
	devices := h.Devices()
	for _, d := range devices {
		path := filepath.Join(root, d)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			return nil, fmt.Errorf("device node %s: %w (the fake hosts need root)", d, err)
		}
	}
	return devices, nil
}

// cpuinfo is /proc/cpuinfo of the host's CPU when the table of Jetson facts
// lists its features: six cores with the kernel's Features line.
func (h FakeHost) cpuinfo() string {
	soc, ok := computecap.DefaultTable().SoCByID(h.SocID)
	if !ok || len(soc.CPU.Features) == 0 {
		return ""
	}
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, "processor\t: %d\nBogoMIPS\t: 62.50\nFeatures\t: %s\nCPU implementer\t: 0x41\nCPU architecture: 8\n\n",
			i, strings.Join(soc.CPU.Features, " "))
	}
	return b.String()
}
