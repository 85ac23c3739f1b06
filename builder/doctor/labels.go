package doctor

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// LabelPrefix is the namespace of the node labels doctor writes. It is a
// sub-namespace of feature.node.kubernetes.io, which node-feature-discovery
// accepts from its local feature files without configuration
// (nfd-master's FeatureLabelSubNsSuffix), so the same keys serve clusters
// with NFD and those labelled by jetbake's own DaemonSet.
const LabelPrefix = "jetbake.feature.node.kubernetes.io/"

// The node labels. Versions are also split into integer labels, because
// node affinity compares only integers (Gt, Lt).
const (
	// LabelJetson is "true" on a Jetson: a Tegra SoC and an L4T release.
	LabelJetson = LabelPrefix + "jetson"
	// LabelSoC is the Tegra SoC ("tegra234"), LabelFamily its family ("Orin").
	LabelSoC    = LabelPrefix + "soc"
	LabelFamily = LabelPrefix + "family"
	// LabelSM is the GPU's compute capability ("8.7").
	LabelSM = LabelPrefix + "sm"
	// LabelL4T is the L4T release ("36.4.3"); LabelL4TMajor its line
	// ("36"), LabelL4TMinor and LabelL4TPatch the rest.
	LabelL4T      = LabelPrefix + "l4t"
	LabelL4TMajor = LabelPrefix + "l4t.major"
	LabelL4TMinor = LabelPrefix + "l4t.minor"
	LabelL4TPatch = LabelPrefix + "l4t.patch"
	// LabelJetPack is the JetPack release of the L4T release ("6.2").
	LabelJetPack = LabelPrefix + "jetpack"
	// LabelDriverCUDA is the CUDA version of the driver ("12.6"), with its
	// major and minor.
	LabelDriverCUDA      = LabelPrefix + "cuda.driver"
	LabelDriverCUDAMajor = LabelPrefix + "cuda.driver.major"
	LabelDriverCUDAMinor = LabelPrefix + "cuda.driver.minor"
	// LabelNVIDIARuntime is "true" when NVIDIA's container runtime is
	// installed and configured in the engine Kubernetes runs pods with
	// (the nvidia RuntimeClass can run there), else "false".
	LabelNVIDIARuntime = LabelPrefix + "nvidia-runtime"
)

// FeaturesDir is where node-feature-discovery's worker reads local feature
// files on the host.
const FeaturesDir = "/etc/kubernetes/node-feature-discovery/features.d"

// runtimeDirs are where NVIDIA's container runtime is installed: Debian's
// package, a manual install, and the GPU operator's toolkit folder (the
// places k3s looks for it when it writes containerd's nvidia runtime).
func runtimeDirs() []string {
	return []string{"/usr/bin", "/usr/local/bin", "/usr/local/nvidia/toolkit"}
}

// findRuntime returns the path of nvidia-container-runtime under root, or "".
func findRuntime(root string) string {
	p, _ := host.Root(root).Find("nvidia-container-runtime", runtimeDirs(), host.Executable)
	return p
}

// NodeLabels are the host's facts as node labels: the facts the entrypoint
// reads (computecap/host, through hostfit.SysrootReader: soc_id, the L4T
// release, the driver's CUDA version for it) and whether pods can run with
// NVIDIA's runtime: LabelNVIDIARuntime is "true" exactly when the row
// NVIDIARuntimeCheck names is ok, so the table and the label agree. A host
// that is not a Jetson gets only LabelJetson "false" and LabelNVIDIARuntime.
func (r *Report) NodeLabels() map[string]string {
	h := r.Host
	out := map[string]string{LabelJetson: strconv.FormatBool(h.Jetson()), LabelNVIDIARuntime: strconv.FormatBool(r.RuntimeReady())}
	if !h.Jetson() {
		return out
	}
	out[LabelSoC], out[LabelFamily] = h.SoC, h.Family
	out[LabelSM] = h.GPU.String()
	out[LabelL4T] = h.L4T.String()
	out[LabelL4TMajor], out[LabelL4TMinor], out[LabelL4TPatch] = strconv.Itoa(h.L4T.Major), strconv.Itoa(h.L4T.Minor), strconv.Itoa(h.L4T.Patch)
	if h.JetPack != "" {
		out[LabelJetPack] = h.JetPack
	}
	if !h.DriverCUDA.IsZero() {
		out[LabelDriverCUDA] = h.DriverCUDA.String()
		out[LabelDriverCUDAMajor], out[LabelDriverCUDAMinor] = strconv.Itoa(h.DriverCUDA.Major), strconv.Itoa(h.DriverCUDA.Minor)
	}
	for k, v := range out {
		if v == "" {
			delete(out, k)
		}
	}
	return out
}

// RuntimeReady reports whether the row the nvidia-runtime label follows
// (NVIDIARuntimeCheck) is ok.
func (r *Report) RuntimeReady() bool {
	for _, c := range r.Checks {
		if c.Name == r.NVIDIARuntimeCheck {
			return c.Status == StatusOK
		}
	}
	return false
}

// LabelWarnings are the sentences that say why the labels place no pod on
// this host: it is not a Jetson (and nothing more), or the row the
// nvidia-runtime label follows is not ok (with its fix). Writing the labels still succeeds: a
// labeller runs on every node, Jetson or not.
func (r *Report) LabelWarnings() []string {
	var out []string
	if !r.Host.Jetson() {
		why := "no Jetson SoC or L4T release found"
		for _, c := range r.Checks {
			if c.Status == StatusFail && (c.Name == "jetson" || c.Name == "l4t / jetpack") {
				why = c.Detail
				break
			}
		}
		return append(out, fmt.Sprintf("this host is not a Jetson (%s): its labels say %s=false, and jetbake fleet's workloads place no pod on it", why, strings.TrimPrefix(LabelJetson, LabelPrefix)))
	}
	if !r.RuntimeReady() {
		for _, c := range r.Checks {
			if c.Name == r.NVIDIARuntimeCheck {
				out = append(out, fmt.Sprintf("%s=false: %s (%s): %s", strings.TrimPrefix(LabelNVIDIARuntime, LabelPrefix), c.Name, c.Detail, c.Fix))
			}
		}
	}
	return out
}

// WriteFeatureFile writes labels in node-feature-discovery's local feature
// file format, one name=value a line, sorted, after a comment that names the
// writer.
func WriteFeatureFile(w io.Writer, labels map[string]string) error {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("# Written by jetbake doctor: this host's Jetson facts (docs/fleets.md).\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, labels[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// HostFromLabels reads back the facts NodeLabels wrote, for the host rule;
// ok is false when the labels name no Jetson or cannot be read.
func HostFromLabels(labels map[string]string) (h hostfit.Host, ok bool) {
	if labels[LabelJetson] != "true" {
		return h, false
	}
	t := computecap.DefaultTable()
	gpu, err := computecap.Parse(labels[LabelSM])
	if err != nil {
		return h, false
	}
	l4t, err := computecap.ParseL4TVersion(labels[LabelL4T])
	if err != nil {
		return h, false
	}
	h = hostfit.Host{SoC: labels[LabelSoC], Family: labels[LabelFamily], GPU: gpu, L4T: l4t, L4TVersion: l4t.String(), JetPack: labels[LabelJetPack]}
	if _, known := t.SoCByCapability(gpu); !known {
		return h, false
	}
	if v := labels[LabelDriverCUDA]; v != "" {
		if h.DriverCUDA, err = computecap.ParseCUDAVersion(v); err != nil {
			return h, false
		}
	}
	return h, true
}
