package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
	computecap "github.com/jetbake/jetbake/compute_cap"
)

// FakeHost is a Jetson as a default `docker run --runtime nvidia` shows it
// to a container: the device tree masked (Docker masks /sys/firmware),
// /sys/devices/soc0 (family, soc_id, machine) visible, and the runtime's
// /etc/nv_tegra_release. GPU and DriverCUDA are what the host's driver
// answers; Env passes them to a stand-in libcuda.so.1 (the knobs of
// builder/internal/standin/cuda/libcuda.c).
type FakeHost struct {
	// Name labels the host in reports.
	Name string
	// L4T is the host's Jetson Linux version, e.g. "36.4.3"; empty for none.
	L4T string
	// SocID is /sys/devices/soc0/soc_id.
	SocID int
	// Machine is /sys/devices/soc0/machine, the device tree's model.
	Machine string
	// GPU is the compute capability the driver reports.
	GPU computecap.Capability
	// DriverCUDA is the CUDA version cuDriverGetVersion reports.
	DriverCUDA computecap.CUDAVersion
}

// Env is the stand-in driver's answers as environment variables.
func (h FakeHost) Env() []string {
	return []string{
		"FAKE_CUDA_MAJOR=" + strconv.Itoa(h.GPU.Major),
		"FAKE_CUDA_MINOR=" + strconv.Itoa(h.GPU.Minor),
		"FAKE_CUDA_DRIVER_VERSION=" + strconv.Itoa(h.DriverCUDA.Major*1000+h.DriverCUDA.Minor*10),
	}
}

// Board names as /sys/devices/soc0/machine shows them.
const (
	orinNanoSuper = "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
	agxOrin       = "NVIDIA Jetson AGX Orin Developer Kit"
	agxThor       = "NVIDIA Jetson AGX Thor Developer Kit"
)

// hosts are the fake hosts the checks run on, one per release line:
// R35, R36.3, R36.4.x, R38.2, R38.4 and R39.2. "none" (added by
// WriteHosts) is a container started without the NVIDIA runtime on this
// (GPU-less) machine.
var hosts = []FakeHost{
	{Name: "orin-jp5.1.2", L4T: "35.4.1", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DriverCUDA: cuda(11, 4)},
	{Name: "orin-jp6.0", L4T: "36.3.0", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DriverCUDA: cuda(12, 2)},
	{Name: "orin-jp6", L4T: "36.4.3", SocID: 35, Machine: orinNanoSuper, GPU: sm(8, 7), DriverCUDA: cuda(12, 6)},
	{Name: "orin-jp6.2.1", L4T: "36.4.7", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DriverCUDA: cuda(12, 6)},
	{Name: "orin-jp7.2", L4T: "39.2.0", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DriverCUDA: cuda(13, 2)},
	{Name: "thor-jp7.0", L4T: "38.2.0", SocID: 38, Machine: agxThor, GPU: sm(11, 0), DriverCUDA: cuda(13, 0)},
	{Name: "thor-jp7.1", L4T: "38.4.0", SocID: 38, Machine: agxThor, GPU: sm(11, 0), DriverCUDA: cuda(13, 0)},
	{Name: "thor-jp7.2", L4T: "39.2.0", SocID: 38, Machine: agxThor, GPU: sm(11, 0), DriverCUDA: cuda(13, 2)},
}

func sm(major, minor int) computecap.Capability {
	return computecap.Capability{Major: major, Minor: minor}
}

func cuda(major, minor int) computecap.CUDAVersion {
	return computecap.CUDAVersion{Major: major, Minor: minor}
}

// WriteHosts lays out every fake host under dir and returns them by name,
// with "none" added.
func WriteHosts(dir string) (map[string]runimage.Host, error) {
	out := map[string]runimage.Host{"none": {Name: "none"}}
	for _, h := range hosts {
		root := filepath.Join(dir, h.Name)
		if err := h.write(root); err != nil {
			return nil, fmt.Errorf("fake host %s: %w", h.Name, err)
		}
		out[h.Name] = runimage.Host{Name: h.Name, Root: root, Env: h.Env()}
	}
	return out, nil
}

// write lays out the host's files under root: soc0 and the L4T release
// file, and no device tree.
func (h FakeHost) write(root string) error {
	files := map[string][]byte{
		"sys/devices/soc0/family":  []byte("Tegra\n"),
		"sys/devices/soc0/soc_id":  []byte(strconv.Itoa(h.SocID) + "\n"),
		"sys/devices/soc0/machine": []byte(h.Machine + "\n"),
	}
	if h.L4T != "" {
		files["etc/nv_tegra_release"] = []byte(standin.TegraRelease(h.L4T))
	}
	for name, data := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
