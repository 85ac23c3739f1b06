package hostfit

import (
	"fmt"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// ImageClaims is what an image says of itself in its io.jetbake.* annotations or
// labels (or /etc/jetbake/image.json): enough to apply the host rule.
type ImageClaims struct {
	// JetPack, L4T and CUDA are the release the image was built for.
	JetPack string                 `json:"jetpack"`
	L4T     computecap.L4TVersion  `json:"-"`
	CUDA    computecap.CUDAVersion `json:"cuda"`
	// Targets are the GPUs the image holds a router binary for.
	Targets []computecap.Capability `json:"sm_targets"`
	// Declared is the JetPack row the image's matrix declared when its
	// release rests on declared facts (io.jetbake.facts.jetpack), nil
	// otherwise: the rule adds it to jetbake's table, whose rows win.
	Declared *computecap.JetPackRelease `json:"-"`
}

// tableFor is jetbake's table with the JetPack row img declares.
func tableFor(img ImageClaims) *computecap.Table {
	t := computecap.DefaultTable()
	if img.Declared != nil {
		t, _ = t.Declare(computecap.Facts{JetPacks: []computecap.JetPackRelease{*img.Declared}})
	}
	return t
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
type Rule func(h Host, img ImageClaims) Verdict

// Compatible is the host rule of the entrypoint (computecap.Table.CheckHost)
// applied to what a registry says of an image: the host's GPU must be one the
// image holds a binary for (a Tegra GPU runs only its own SM), and the host's
// L4T (Tegra flavour, JetPack 6 and earlier) or driver CUDA (SBSA flavour,
// JetPack 7 and later) must be new enough, counting the forward-compatibility
// libraries the image's base ships.
func Compatible(h Host, img ImageClaims) Verdict {
	t := tableFor(img)
	if h.DriverCUDAFrom == tableSource(h.L4T) && img.Declared != nil {
		if cuda, ok := t.DriverCUDAForL4T(h.L4T); ok {
			h.DriverCUDA = cuda // the host's release may be the one declared
		}
	}
	if h.GPU.IsZero() {
		return Verdict{Reason: "no NVIDIA GPU was found on this host", Needs: "a Jetson " + gpuList(t, img.Targets)}
	}
	if _, err := t.Pick(h.GPU, img.Targets); err != nil {
		return Verdict{Reason: fmt.Sprintf("it holds no binary for the host's %s (it has %s)",
			t.Describe(h.GPU), smList(img.Targets)), Needs: "a Jetson " + gpuList(t, img.Targets)}
	}
	needs := computecap.ImageNeeds{L4T: img.L4T, CUDA: img.CUDA}
	if flavour, _, ok := t.FlavourOfL4T(img.L4T.Major); ok {
		needs.CompatDirs = t.ShippedCompat(flavour, img.CUDA)
	}
	state := computecap.HostState{L4T: h.L4T, HasL4T: h.L4T.Major != 0, Driver: h.DriverCUDA, HasDriver: !h.DriverCUDA.IsZero()}
	state.SoC, state.HasSoC = t.SoCByCapability(h.GPU)
	v := t.CheckHost(needs, state)
	switch {
	case !v.OK:
		need := v.Need
		if v.Upgrade != "" {
			need += ", such as " + v.Upgrade
		}
		return Verdict{Reason: v.Reason(), Needs: need}
	case v.Unknown:
		return Verdict{OK: true, Reason: "the host's release is unknown, so nothing could be compared; it holds a binary for the " + t.Describe(h.GPU)}
	case v.CompatDir != "":
		return Verdict{OK: true, Reason: fmt.Sprintf("it runs on the %s with the image's %s libraries (%s)", t.Describe(h.GPU), v.CompatDir, v.Host)}
	}
	return Verdict{OK: true, Reason: fmt.Sprintf("the host has %s, and the image needs %s; it holds a binary for the %s", v.Host, v.Need, t.Describe(h.GPU))}
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
func gpuList(t *computecap.Table, cs []computecap.Capability) string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		if soc, ok := t.SoCByCapability(c); ok {
			out = append(out, soc.Family+" (SM "+c.String()+")")
		} else {
			out = append(out, "GPU with SM "+c.String())
		}
	}
	return strings.Join(out, " or ")
}
