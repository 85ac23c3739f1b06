package computecap

import (
	"slices"
	"strings"
)

// GPUDriver is the kernel driver of a Jetson's GPU as a container sees it:
// the device nodes that NVIDIA's container runtime mounts for it (the
// "dev" lines of the host's CSV files) and without which the CUDA driver
// cannot reach the GPU.
type GPUDriver struct {
	// Name names the driver: "nvgpu" (Xavier and Orin) or "OpenRM" (Thor).
	Name string `json:"name"`
	// Nodes are the device nodes CUDA needs, each under the names it has
	// on the kernels of the line (one of them is enough).
	Nodes []DeviceNode `json:"nodes"`
}

// DeviceNode is one device node under its names, the usual one first:
// nvgpu's control node is /dev/nvhost-ctrl-gpu and, on newer kernels,
// also /dev/nvgpu/igpu0/ctrl.
type DeviceNode []string

// String names the node: "/dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl)".
func (n DeviceNode) String() string {
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return n[0] + " (or " + strings.Join(n[1:], " or ") + ")"
}

// equal reports whether two drivers are the same row.
func (d GPUDriver) equal(o GPUDriver) bool {
	return d.Name == o.Name && slices.EqualFunc(d.Nodes, o.Nodes, func(a, b DeviceNode) bool { return slices.Equal(a, b) })
}

// clone returns d with fresh slices.
func (d GPUDriver) clone() GPUDriver {
	d.Nodes = slices.Clone(d.Nodes)
	for i := range d.Nodes {
		d.Nodes[i] = slices.Clone(d.Nodes[i])
	}
	return d
}

// driverFor returns the GPU driver of a Jetson of the family on the
// release: the family's own folder's, else the one of every SoC.
func (r JetPackRelease) driverFor(family string) (GPUDriver, bool) {
	var all GPUDriver
	found := false
	for _, d := range r.DriverDirs {
		switch {
		case d.Family == family && d.Driver.Name != "":
			return d.Driver, true
		case d.Family == "" && d.Driver.Name != "":
			all, found = d.Driver, true
		}
	}
	return all, found
}

// GPUDriverOf returns the GPU driver of a Jetson with SoC soc whose L4T
// major release is l4tMajor (0 when unknown): the one every release of that
// major that the SoC runs agrees on, else, or with no major, the one every
// release the SoC runs agrees on. It is false when the table names none or
// the releases disagree.
func (t *Table) GPUDriverOf(soc SoC, l4tMajor int) (GPUDriver, bool) {
	if l4tMajor != 0 {
		if d, ok := t.gpuDriverOf(soc, l4tMajor); ok {
			return d, true
		}
	}
	return t.gpuDriverOf(soc, 0)
}

// gpuDriverOf is GPUDriverOf over the releases of one L4T major (every
// release when major is 0).
func (t *Table) gpuDriverOf(soc SoC, major int) (GPUDriver, bool) {
	var out GPUDriver
	found := false
	for _, r := range t.JetPacks {
		l, err := ParseL4TVersion(r.L4T)
		if err != nil || !soc.Supports(r.JetPack) || (major != 0 && l.Major != major) {
			continue
		}
		d, ok := r.driverFor(soc.Family)
		if !ok {
			continue
		}
		if found && !out.equal(d) {
			return GPUDriver{}, false
		}
		out, found = d, true
	}
	return out.clone(), found
}

// GPUDeviceNodes returns every name of every device node of the table's
// GPU drivers, each once, in the table's order: what a container is
// searched for to tell whether a GPU's device nodes are in it at all.
func (t *Table) GPUDeviceNodes() []string {
	var out []string
	for _, r := range t.JetPacks {
		for _, d := range r.DriverDirs {
			for _, n := range d.Driver.Nodes {
				for _, name := range n {
					if !slices.Contains(out, name) {
						out = append(out, name)
					}
				}
			}
		}
	}
	return out
}

// cloneDriverDirs returns dirs with fresh slices, their drivers' nodes too.
func cloneDriverDirs(dirs []DriverDir) []DriverDir {
	out := slices.Clone(dirs)
	for i := range out {
		out[i].Driver = out[i].Driver.clone()
	}
	return out
}
