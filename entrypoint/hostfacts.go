package main

import (
	"strings"
)

// gpuDeviceNodes returns the device nodes through which a container reaches
// an NVIDIA GPU: desktop and OpenRM (Thor) drivers, and nvgpu (Orin, Xavier).
func gpuDeviceNodes() [6]string {
	return [...]string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu", "/dev/nvgpu", "/dev/nvmap"}
}

// readHostFacts turns the host files package host read into the facts
// --explain lists (L4T release, board name) and reads the GPU device nodes;
// these are not sources of the compute capability but feed the host rule
// and the messages.
func readHostFacts(root sysroot, h *hostInfo) {
	h.Facts = append(h.Facts, readTegraRelease(h), readModel(h), readNodes(root, h))
}

// readTegraRelease reports /etc/nv_tegra_release.
func readTegraRelease(h *hostInfo) source {
	src := source{Name: tegraReleasePath}
	f := h.facts
	if !f.TegraRelease {
		src.Detail = "absent"
		return src
	}
	h.TegraRelease = true
	if f.L4TErr != nil {
		src.Detail = f.L4TErr.Error()
		return src
	}
	h.L4T, h.HasL4T = f.L4T, true
	src.Found, src.Value = true, f.L4T.String()
	src.Detail = "L4T R" + f.L4T.String()
	if jp := h.table.JetPackName(f.L4T); jp != "" {
		src.Detail += ", JetPack " + jp
	}
	return src
}

// readModel reports the board name: the device tree's model, else
// /sys/devices/soc0/machine, which the kernel fills from that model and
// which stays visible when the device tree is masked.
func readModel(h *hostInfo) source {
	f := h.facts
	files := deviceTreeFiles(modelName)
	src := source{Name: files[0]}
	switch {
	case f.ModelPath != "":
		h.Model = f.Model
		src.Name, src.Found, src.Value, src.Detail = f.ModelPath, f.Model != "", f.Model, "board name"
	case f.Machine != "":
		h.Model = f.Machine
		src.Name, src.Found, src.Value, src.Detail = socMachinePath, true, f.Machine, "board name (the device tree's model)"
	default:
		src.Detail, src.LookedAt = "absent", []string{files[0], files[1], socMachinePath}
	}
	return src
}

// readNodes lists the GPU device nodes present.
func readNodes(root sysroot, h *hostInfo) source {
	src := source{Name: "GPU device nodes"}
	nodes := gpuDeviceNodes()
	for _, n := range nodes {
		if root.exists(n) {
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
