package detect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// The advice every no-GPU message gives.
const runtimeAdvice = "it was probably started without --runtime nvidia (or --device nvidia.com/gpu=all with CDI)"

// noGPUMessage says that no source found a GPU, and what was looked at.
func noGPUMessage(h *Host) string {
	return "no NVIDIA GPU is visible in this container: " + runtimeAdvice +
		". Looked at: " + lookedAt(h) + ". Run with --explain for details, or set " +
		EnvOverride + " (such as 8.7) to choose a binary by hand."
}

// driverFailedMessage says that the NVIDIA runtime's files are in the
// container (nv_tegra_release, device nodes, libcuda.so.1) but the CUDA
// driver library it mounted cannot be used, so that no GPU was found: the
// cause is that library, not a missing --runtime nvidia.
func driverFailedMessage(h *Host) string {
	traces := make([]string, 0, 3)
	if h.TegraRelease {
		traces = append(traces, host.TegraReleasePath)
	}
	if len(h.Nodes) > 0 {
		traces = append(traces, "GPU device nodes "+strings.Join(h.Nodes, ", "))
	}
	lib := h.Libcuda
	traces = append(traces, lib)
	detail := lib
	for _, s := range h.Sources {
		if s.Name == SourceDriver && !s.Found {
			detail = s.Detail
		}
	}
	return "the NVIDIA runtime is there (" + strings.Join(traces, ", ") + ") but its CUDA driver " + lib +
		" cannot be used: " + detail + ". Check the host's CUDA driver (nvidia-l4t-cuda) and that the CSV files in " +
		csvFolder + " list it and what it links; run with --explain for details, or set " + EnvOverride +
		" (such as 8.7) to choose a binary by hand."
}

// noDeviceMessage says that the CUDA driver loaded but sees no GPU
// (cuInit returned CUDA_ERROR_NO_DEVICE), so that no binary can use one:
// with no GPU device node visible, the container was started without the
// NVIDIA runtime's devices; with nodes, they are not usable by this user
// or hidden.
func noDeviceMessage(h *Host) string {
	msg := "the CUDA driver " + h.Libcuda + " is in this container but sees no GPU (cuInit: " + cudaNoDevice + ")"
	if len(h.Nodes) == 0 {
		return msg + " and no GPU device node is visible (looked for " + strings.Join(h.table.GPUDeviceNodes(), ", ") + "): " +
			"start the container with --runtime nvidia (or --device nvidia.com/gpu=all with CDI), which mounts them; " +
			"if it was, check that the CSV files in " + csvFolder + " list the device nodes. Run with --explain for details."
	}
	return msg + " although the GPU device nodes " + strings.Join(h.Nodes, ", ") + " are there: check that the container's " +
		"user can open them (on a Jetson they belong to the video group) and that CUDA_VISIBLE_DEVICES, if set, names the GPU. " +
		"Run with --explain for details."
}

// missingNodesMessage says that the NVIDIA runtime's files are in the
// container but not every device node the Jetson's GPU driver needs
// (Host.lacksNodes), so that the router's CUDA driver would load and reach
// no GPU: the runtime did not mount them.
func missingNodesMessage(h *Host) string {
	n := h.GPUNodes
	var traces []string
	if h.TegraRelease {
		traces = append(traces, host.TegraReleasePath)
	}
	if h.Libcuda != "" {
		traces = append(traces, h.Libcuda)
	}
	if len(n.Present) > 0 {
		traces = append(traces, "GPU device nodes "+strings.Join(n.Present, ", "))
	}
	missing := make([]string, len(n.Missing))
	for i, m := range n.Missing {
		missing[i] = m.String()
	}
	return "this is a " + gpuName(h) + " and the NVIDIA runtime's files are in this container (" + strings.Join(traces, ", ") +
		"), but not the device nodes its GPU driver (" + n.Driver.Name + ") needs, " + andList(missing) +
		", without which CUDA reaches no GPU: start the container with --runtime nvidia (or --device nvidia.com/gpu=all with CDI), " +
		"which mounts them, and if it was, check that the CSV files in " + csvFolder + " list them. Run with --explain for details."
}

// andList joins items as "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// csvFolder is where the NVIDIA runtime reads, on a Jetson, the host files it
// mounts into containers (nvidia-container-toolkit, modes.csv.mount-spec-path).
const csvFolder = "/etc/nvidia-container-runtime/host-files-for-container.d"

// noAccessMessage says that the device tree names a Jetson but the
// container has no way to its GPU.
func noAccessMessage(h *Host) string {
	return "this is a " + gpuName(h) + ", but the container has no access to its GPU: " + runtimeAdvice +
		". Looked at: " + lookedAt(h) + ". Run with --explain for details."
}

// lookedAt lists each source and host fact with its short result.
func lookedAt(h *Host) string {
	parts := make([]string, 0, len(h.Sources)+len(h.HostFiles))
	for _, s := range h.Sources {
		parts = append(parts, s.Name+" ("+shortResult(s)+")")
	}
	for _, s := range h.HostFiles {
		if !isBoardName(s.Name) {
			parts = append(parts, s.Name+" ("+shortResult(s)+")")
		}
	}
	return strings.Join(parts, ", ")
}

// isBoardName reports whether a fact is the board name, which messages leave out.
func isBoardName(name string) bool {
	files := host.DeviceTreeFiles("model")
	return name == files[0] || name == files[1] || name == host.SocMachinePath
}

// shortResult is a source's value, or its detail when it found nothing.
func shortResult(s Source) string {
	if s.Found {
		return s.Value
	}
	return s.Detail
}

// gpuName names the GPU found, with the board and the source:
// "Jetson Orin, SM 8.7 (NVIDIA Jetson AGX Orin Developer Kit, from device-tree)".
func gpuName(h *Host) string {
	from := "from " + h.From
	if board := h.BoardName(); board != "" {
		from = board + ", " + from
	}
	return h.table.Describe(h.GPU) + " (" + from + ")"
}

// noBinaryMessage says that the image holds no binary for the GPU, lists
// what it holds and names a sibling image that has one.
func noBinaryMessage(img *ParsedDescription, h *Host) string {
	held := make([]string, len(img.Targets))
	for i, t := range img.Targets {
		held[i] = img.Caps[i].SM() + " (" + t.Path + ")"
	}
	msg := "this image has no " + img.Router + " binary for the GPU found, " + gpuName(h) +
		"; it holds " + strings.Join(held, ", ") + "."
	q := siblingQuery{gpu: &h.GPU, host: h}
	if s, ok := bestSibling(img, q); ok {
		return msg + " Use " + siblingName(s) + ", which has one."
	}
	if len(img.Family) > 0 {
		return msg + " No other image of its family has one for this host."
	}
	return msg
}

// hostRuleMessage says that the host does not meet the image's host rule:
// the host's version, what the image needs, and the family image that fits
// or the JetPack to upgrade to.
func hostRuleMessage(img *ParsedDescription, h *Host, v computecap.HostVerdict) string {
	msg := "this image is for " + imageRelease(img) + " and needs " + v.Need + ", but the host has " + v.Host
	q := siblingQuery{host: h}
	if h.Found() {
		q.gpu = &h.GPU
	}
	var fixes []string
	if s, ok := bestSibling(img, q); ok {
		fixes = append(fixes, "use "+siblingName(s)+" instead")
	} else if h.HasL4T {
		if jp := h.table.JetPackName(h.L4T); jp != "" {
			fixes = append(fixes, "use a JetPack "+jp+" image instead")
		} else {
			fixes = append(fixes, "use an image built for L4T R"+strconv.Itoa(h.L4T.Major)+" instead")
		}
	}
	if v.Upgrade != "" {
		fixes = append(fixes, "upgrade the host to "+v.Upgrade+" or later")
	}
	fixes = append(fixes, "set "+envSkipL4T+"=1 to try this one anyway")
	return msg + ": " + strings.Join(fixes, ", or ") + "."
}

// imageRelease names the image's release: "JetPack 6.2 (L4T R36.4.3,
// CUDA 12.6)".
func imageRelease(img *ParsedDescription) string {
	l4t := "L4T R" + strconv.Itoa(img.L4TMajor)
	if img.L4T != "" {
		l4t = "L4T R" + img.L4T
	}
	if !img.CUDAVersion.IsZero() {
		l4t += ", CUDA " + img.CUDAVersion.String()
	}
	if img.JetPack == "" {
		return l4t
	}
	return "JetPack " + img.JetPack + " (" + l4t + ")"
}

// badOverrideMessage says that JETBAKE_COMPUTE_CAP cannot be read.
func badOverrideMessage(err error) string {
	return EnvOverride + ": " + err.Error() + "; set it like " + EnvOverride + "=8.7, or unset it to detect the GPU."
}

// ExecFailedMessage says that the chosen binary could not be started.
func ExecFailedMessage(d *Decision, h *Host, err error) string {
	return fmt.Sprintf("cannot start %s, the binary chosen for %s: %v", d.Choice, h.table.Describe(h.GPU), err)
}
