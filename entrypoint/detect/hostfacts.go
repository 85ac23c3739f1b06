package detect

import (
	"strings"

	"github.com/jetbake/jetbake/computecap/host"
)

// gpuDeviceNodes returns the device nodes through which a container reaches
// an NVIDIA GPU: desktop and OpenRM (Thor) drivers, and nvgpu (Orin, Xavier).
func gpuDeviceNodes() [6]string {
	return [...]string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu", "/dev/nvgpu", "/dev/nvmap"}
}

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

// readNodes lists the GPU device nodes present.
func readNodes(root host.Root, h *Host) Source {
	src := Source{Name: "GPU device nodes"}
	nodes := gpuDeviceNodes()
	for _, n := range nodes {
		if root.Exists(n) {
			h.Nodes = append(h.Nodes, n)
		}
	}
	if len(h.Nodes) == 0 {
		src.Detail, src.LookedAt = "none", nodes[:]
		return src
	}
	src.Found, src.Value, src.Detail = true, strings.Join(h.Nodes, ", "), "present"
	return src
}
