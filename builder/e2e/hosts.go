package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/jetbake/jetbake/builder/runimage"
	"github.com/jetbake/jetbake/builder/standin"
)

// FakeHost is a Jetson as the NVIDIA container runtime shows it to a
// container: its L4T release file, device tree and soc0 facts.
type FakeHost struct {
	// Name labels the host in reports.
	Name string
	// L4T is the host's Jetson Linux version, e.g. "36.4.3"; empty for none.
	L4T string
	// Compatible is the device tree's compatible list, SoC last.
	Compatible []string
	// Model is the device tree's model string.
	Model string
	// SocID is /sys/devices/soc0/soc_id.
	SocID int
	// GPU is the compute capability and CUDA driver version ("8.7", 12060)
	// the host's CUDA driver reports; in the fake world the stand-in router
	// reads them from FAKE_CUDA_* variables (see GPU.Env).
	GPU GPU
}

// GPU is what a host's CUDA driver answers: cuDeviceGetAttribute's compute
// capability and cuDriverGetVersion.
type GPU struct {
	Major, Minor, Driver int
}

// Env is the GPU as the variables of entrypoint/cudaprobe/testdata/fakecuda.c,
// the stand-in driver's knobs.
func (g GPU) Env() []string {
	return []string{"FAKE_CUDA_MAJOR=" + strconv.Itoa(g.Major), "FAKE_CUDA_MINOR=" + strconv.Itoa(g.Minor),
		"FAKE_CUDA_DRIVER_VERSION=" + strconv.Itoa(g.Driver)}
}

// Hosts are the fake hosts the checks run on. "none" is a container started
// without the NVIDIA runtime on this (GPU-less) machine.
var hosts = []FakeHost{
	{Name: "orin-jp6", L4T: "36.4.3", Model: "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super", SocID: 35,
		Compatible: []string{"nvidia,p3768-0000+p3767-0005-super", "nvidia,p3767-0005", "nvidia,tegra234"}, GPU: GPU{8, 7, 12060}},
	{Name: "orin-jp7.2", L4T: "39.2.0", Model: "NVIDIA Jetson AGX Orin Developer Kit", SocID: 35,
		Compatible: []string{"nvidia,p3737-0000+p3701-0005", "nvidia,p3701-0005", "nvidia,tegra234"}, GPU: GPU{8, 7, 13020}},
	{Name: "thor-jp7.0", L4T: "38.2.0", Model: "NVIDIA Jetson AGX Thor Developer Kit", SocID: 38,
		Compatible: []string{"nvidia,p4071-0000+p3834-0008", "nvidia,p3834-0008", "nvidia,tegra264"}, GPU: GPU{11, 0, 13000}},
	{Name: "thor-jp7.2", L4T: "39.2.0", Model: "NVIDIA Jetson AGX Thor Developer Kit", SocID: 38,
		Compatible: []string{"nvidia,p4071-0000+p3834-0008", "nvidia,p3834-0008", "nvidia,tegra264"}, GPU: GPU{11, 0, 13020}},
}

// WriteHosts lays out every fake host under dir and returns them by name,
// with "none" added (no NVIDIA runtime: no driver answers either).
func WriteHosts(dir string) (map[string]runimage.Host, error) {
	out := map[string]runimage.Host{"none": {Name: "none"}}
	for _, h := range hosts {
		root := filepath.Join(dir, h.Name)
		if err := h.write(root); err != nil {
			return nil, fmt.Errorf("fake host %s: %w", h.Name, err)
		}
		out[h.Name] = runimage.Host{Name: h.Name, Root: root, Env: h.GPU.Env()}
	}
	return out, nil
}

func (h FakeHost) write(root string) error {
	var compatible []byte
	for _, c := range h.Compatible {
		compatible = append(append(compatible, c...), 0)
	}
	files := map[string][]byte{
		"sys/devices/soc0/family":                 []byte("Tegra\n"),
		"sys/devices/soc0/soc_id":                 []byte(strconv.Itoa(h.SocID) + "\n"),
		"sys/firmware/devicetree/base/compatible": compatible,
		"sys/firmware/devicetree/base/model":      append([]byte(h.Model), 0),
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
