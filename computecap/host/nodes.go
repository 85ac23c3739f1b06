package host

import (
	"os"
	"slices"

	"github.com/jetbake/jetbake/computecap"
)

// GPUNodes is what a container shows of the device nodes of its GPU's
// driver, which NVIDIA's container runtime mounts beside the driver's
// libraries: without them the CUDA driver loads but reaches no GPU.
type GPUNodes struct {
	// Present are the device nodes of the table's GPU drivers
	// (Table.GPUDeviceNodes) that are in the container, in that order.
	Present []string
	// Driver is the GPU driver of the host's SoC on its L4T line
	// (Table.GPUDriverOf) when HasDriver.
	Driver    computecap.GPUDriver
	HasDriver bool
	// Missing are the driver's nodes none of whose names is present.
	Missing []computecap.DeviceNode
}

// ReadGPUNodes looks for the GPU device nodes under the root: one stat
// call for each name of Table.GPUDeviceNodes (a handful), and, on a
// Jetson whose SoC the facts name, which of its driver's nodes are
// missing. A node is present when something other than a folder is at its
// path (a character device in a container; the tests' host trees hold
// files).
func ReadGPUNodes(root Root, t *computecap.Table, f *Facts) GPUNodes {
	var n GPUNodes
	for _, p := range t.GPUDeviceNodes() {
		if fi, err := os.Stat(root.Path(p)); err == nil && !fi.IsDir() {
			n.Present = append(n.Present, p)
		}
	}
	if !f.HasSoC {
		return n
	}
	major := 0
	if f.HasL4T {
		major = f.L4T.Major
	}
	n.Driver, n.HasDriver = t.GPUDriverOf(f.SoC, major)
	for _, node := range n.Driver.Nodes {
		if !slices.ContainsFunc(node, func(name string) bool { return slices.Contains(n.Present, name) }) {
			n.Missing = append(n.Missing, node)
		}
	}
	return n
}
