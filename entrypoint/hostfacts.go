package main

import (
	"strings"
)

// gpuDeviceNodes returns the device nodes through which a container reaches
// an NVIDIA GPU: desktop and OpenRM (Thor) drivers, and nvgpu (Orin, Xavier).
func gpuDeviceNodes() [6]string {
	return [...]string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu", "/dev/nvgpu", "/dev/nvmap"}
}

// readHostFacts reads the host's L4T release, board name and GPU device
// nodes; these are not sources of the compute capability but feed the L4T
// check and the messages.
func readHostFacts(root sysroot, h *hostInfo) {
	h.Facts = append(h.Facts, readTegraRelease(root, h), readModel(root, h), readNodes(root, h))
}

// readTegraRelease reads /etc/nv_tegra_release.
func readTegraRelease(root sysroot, h *hostInfo) source {
	src := source{Name: tegraReleasePath}
	data, err := root.readFile(tegraReleasePath)
	if err != nil {
		src.Detail = "absent"
		return src
	}
	h.TegraRelease = true
	v, err := parseTegraRelease(data)
	if err != nil {
		src.Detail = err.Error()
		return src
	}
	h.L4T, h.HasL4T = v, true
	src.Found, src.Value = true, v.String()
	src.Detail = "L4T R" + v.String()
	if jp := v.jetPack(); jp != "" {
		src.Detail += ", JetPack " + jp
	}
	return src
}

// readModel reads the device tree's board name.
func readModel(root sysroot, h *hostInfo) source {
	files := deviceTreeFiles(modelName)
	src := source{Name: files[0]}
	for _, p := range files {
		if data, err := root.readFile(p); err == nil {
			h.Model = parseModel(data)
			src.Name, src.Found, src.Value, src.Detail = p, h.Model != "", h.Model, "board name"
			return src
		}
	}
	src.Detail, src.LookedAt = "absent", files[:]
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
