package host

import (
	"fmt"
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// Image is what an image says of itself in its io.jetbake.* annotations or
// labels (or /etc/jetbake/image.json): enough to apply the host rule.
type Image struct {
	// JetPack, L4T and CUDA are the release the image was built for.
	JetPack string                 `json:"jetpack"`
	L4T     L4T                    `json:"-"`
	CUDA    computecap.CUDAVersion `json:"cuda"`
	// Targets are the GPUs the image holds a router binary for.
	Targets []computecap.Capability `json:"sm_targets"`
	// ForwardCompat is set when the image carries CUDA forward-compatibility
	// libraries that let an older driver run its newer CUDA.
	ForwardCompat bool `json:"forward_compat,omitempty"`
}

// Verdict says whether an image runs on a host and, when not, why and what
// the host would need.
type Verdict struct {
	// OK is true when the image runs on the host.
	OK bool `json:"ok"`
	// Reason is one sentence: why it runs, or why not.
	Reason string `json:"reason"`
	// Needs says what the host would need for this image ("" when OK).
	Needs string `json:"needs,omitempty"`
}

// Rule decides whether img runs on a host with facts h.
type Rule func(h Facts, img Image) Verdict

// sbsaSince is the first L4T major whose images use the SBSA CUDA of
// JetPack 7, tied to the driver's CUDA version rather than the L4T minor.
const sbsaSince = 38

// Compatible is the placeholder host rule; replace it with the shared one.
// An image runs on a host when the host's GPU is one the image holds a
// binary for (compute_cap's rules: a Tegra GPU runs only its own SM), and:
//   - Tegra images (L4T R35, R36): the host runs the same L4T major and a
//     minor at least the image's (an R36.4 image needs R36.4+, since the
//     runtime refuses it on R36.3 through NVIDIA_REQUIRE_CUDA);
//   - SBSA images (JetPack 7, L4T R38 and R39): the driver's CUDA has the
//     image's major and a minor at least the image's, unless the image
//     carries forward-compatibility libraries; R38 and R39 hosts both run them.
//
// Sources: NVIDIA's Jetson Linux release notes and the CUDA compatibility
// guide; jetson-containers' l4t_version_compatible.
func Compatible(h Facts, img Image) Verdict {
	if h.GPU.IsZero() {
		return Verdict{Reason: "no NVIDIA GPU was found on this host", Needs: "a Jetson " + gpuList(img.Targets)}
	}
	if _, err := computecap.Pick(h.GPU, img.Targets); err != nil {
		return Verdict{Reason: fmt.Sprintf("it holds no binary for the host's %s (it has %s)",
			computecap.Describe(h.GPU), smList(img.Targets)), Needs: "a Jetson " + gpuList(img.Targets)}
	}
	if img.L4T.Major >= sbsaSince {
		return sbsaVerdict(h, img)
	}
	return tegraVerdict(h, img)
}

func tegraVerdict(h Facts, img Image) Verdict {
	needs := fmt.Sprintf("L4T R%d.%d or a later R%d (JetPack %s)", img.L4T.Major, img.L4T.Minor, img.L4T.Major, img.JetPack)
	switch {
	case h.L4T.Major == 0:
		return Verdict{Reason: "the host has no /etc/nv_tegra_release: its L4T release is unknown", Needs: needs}
	case h.L4T.Major != img.L4T.Major:
		return Verdict{Reason: fmt.Sprintf("it is built for L4T R%d but the host runs R%s", img.L4T.Major, h.L4T), Needs: needs}
	case h.L4T.Minor < img.L4T.Minor:
		return Verdict{Reason: fmt.Sprintf("it is built for L4T R%d.%d, newer than the host's R%s", img.L4T.Major, img.L4T.Minor, h.L4T), Needs: needs}
	}
	return Verdict{OK: true, Reason: fmt.Sprintf("the host runs L4T R%s, the image's R%d.%d or later, with a %s",
		h.L4T, img.L4T.Major, img.L4T.Minor, computecap.Describe(h.GPU))}
}

func sbsaVerdict(h Facts, img Image) Verdict {
	needs := fmt.Sprintf("a driver for CUDA %d.%d or a later %d.x (JetPack %s or later)", img.CUDA.Major, img.CUDA.Minor, img.CUDA.Major, img.JetPack)
	d := h.DriverCUDA
	switch {
	case d.IsZero():
		return Verdict{Reason: "the driver's CUDA version is unknown", Needs: needs}
	case d.Major != img.CUDA.Major:
		return Verdict{Reason: fmt.Sprintf("it needs CUDA %s but the driver supports CUDA %s", img.CUDA, d), Needs: needs}
	case d.Minor < img.CUDA.Minor && !img.ForwardCompat:
		return Verdict{Reason: fmt.Sprintf("it needs CUDA %s, newer than the driver's CUDA %s, and carries no forward-compatibility libraries", img.CUDA, d), Needs: needs}
	}
	return Verdict{OK: true, Reason: fmt.Sprintf("the driver supports CUDA %s (the image needs %s) on a %s", d, img.CUDA, computecap.Describe(h.GPU))}
}

func smList(cs []computecap.Capability) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = "SM " + c.String()
	}
	if len(out) == 0 {
		return "no binary"
	}
	return strings.Join(out, ", ")
}

// gpuList names the Jetsons of targets: "Orin (SM 8.7) or Thor (SM 11.0)".
func gpuList(cs []computecap.Capability) string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		if soc, ok := computecap.SoCByCapability(c); ok {
			out = append(out, soc.Family+" (SM "+c.String()+")")
		} else {
			out = append(out, "GPU with SM "+c.String())
		}
	}
	return strings.Join(out, " or ")
}
