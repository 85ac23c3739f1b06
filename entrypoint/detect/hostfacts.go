package detect

import (
	"strings"

	"github.com/jetbake/jetbake/computecap/host"
)

// reportHostFiles reports the host files package host read that are not
// sources of the compute capability but feed the host rule and the
// messages (the L4T release, the board name), and reads the GPU device
// nodes, for --explain.
func reportHostFiles(root host.Root, h *Host) {
	h.HostFiles = append(h.HostFiles, reportTegraRelease(h), reportModel(h), readNodes(root, h))
}

// reportTegraRelease reports /etc/nv_tegra_release.
func reportTegraRelease(h *Host) Source {
	src := Source{Name: host.TegraReleasePath}
	switch {
	case !h.TegraRelease:
		src.Detail = "absent"
	case h.L4TErr != nil:
		src.Detail = h.L4TErr.Error()
	default:
		src.Found, src.Value = true, h.L4T.String()
		src.Detail = "L4T R" + h.L4T.String()
		if jp := h.table.JetPackName(h.L4T); jp != "" {
			src.Detail += ", JetPack " + jp
		}
	}
	return src
}

// reportModel reports the board name (Facts.BoardName): the device tree's
// model, else /sys/devices/soc0/machine, which the kernel fills from that
// model and which stays visible when the device tree is masked.
func reportModel(h *Host) Source {
	files := host.DeviceTreeFiles("model")
	src := Source{Name: files[0]}
	switch {
	case h.Model != "" || (h.ModelPath != "" && h.Machine == ""):
		src.Name, src.Found, src.Value, src.Detail = h.ModelPath, h.Model != "", h.Model, "board name"
	case h.Machine != "":
		src.Name, src.Found, src.Value, src.Detail = host.SocMachinePath, true, h.Machine, "board name (the device tree's model)"
	default:
		src.Detail, src.LookedAt = "absent", []string{files[0], files[1], host.SocMachinePath}
	}
	return src
}

// readNodes reports the GPU device nodes present (package host read them
// with the facts: computecap.Table.GPUDeviceNodes, a stat call each).
func readNodes(_ host.Root, h *Host) Source {
	src := Source{Name: "GPU device nodes"}
	h.Nodes = h.GPUNodes.Present
	if len(h.Nodes) == 0 {
		src.Detail, src.LookedAt = "none", h.table.GPUDeviceNodes()
		return src
	}
	src.Found, src.Value, src.Detail = true, strings.Join(h.Nodes, ", "), "present"
	return src
}

// NodeCheck is the check of the GPU driver's device nodes on a Jetson
// (Host.lacksNodes), as --explain shows it.
type NodeCheck struct {
	// Driver is the GPU driver of the host's SoC and L4T line: "nvgpu".
	Driver string `json:"driver"`
	// Needs are the nodes it needs; Missing those that are not there.
	Needs   []string `json:"needs"`
	Missing []string `json:"missing,omitempty"`
	// Result says whether the check passed, refused, or did not apply.
	Result string `json:"result"`
}

// NodeCheck returns the device-node check of a Jetson whose GPU driver the
// table names; nil otherwise.
func (h *Host) NodeCheck() *NodeCheck {
	n := h.GPUNodes
	if !n.HasDriver {
		return nil
	}
	c := &NodeCheck{Driver: n.Driver.Name}
	for _, d := range n.Driver.Nodes {
		c.Needs = append(c.Needs, d.String())
	}
	for _, d := range n.Missing {
		c.Missing = append(c.Missing, d.String())
	}
	switch {
	case len(n.Missing) == 0:
		c.Result = "ok: every node is there"
	case h.From == srcOverride:
		c.Result = "not applied: " + EnvOverride + " chose the binary"
	case h.DriverState == DriverAnswered:
		c.Result = "not applied: the CUDA driver answered cuInit, so it reaches the GPU"
	default:
		c.Result = "refused: the CUDA driver would load and reach no GPU"
	}
	return c
}
