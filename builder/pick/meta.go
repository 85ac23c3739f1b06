package pick

import (
	"fmt"
	"strings"

	"github.com/jetbake/jetbake/builder/host"
	"github.com/jetbake/jetbake/builder/matrix"
	computecap "github.com/jetbake/jetbake/compute_cap"
)

// Meta is what a jetbake image says of itself.
type Meta struct {
	// Release is the matrix release, such as "jetpack6.2".
	Release string `json:"release,omitempty"`
	// Version is the router's version.
	Version string `json:"version,omitempty"`
	// JetPack, L4T and CUDA are the release's versions.
	JetPack string `json:"jetpack,omitempty"`
	L4T     string `json:"l4t,omitempty"`
	CUDA    string `json:"cuda,omitempty"`
	// Targets are the SMs the image holds a binary for, such as ["8.7", "11.0"].
	Targets []string `json:"sm_targets,omitempty"`
	// Tier is the support tier: supported, candidate, evaluate-later or legacy.
	Tier string `json:"tier,omitempty"`

	image host.Image
}

// parseMeta reads the io.jetbake.* keys, failing with the key and value that
// cannot be read.
func parseMeta(kv map[string]string) (Meta, error) {
	m := Meta{Release: kv[matrix.KeyRelease], Version: kv[matrix.KeyVersion], JetPack: kv[matrix.KeyJetPack], L4T: kv[matrix.KeyL4T],
		CUDA: kv[matrix.KeyCUDA], Tier: kv[matrix.KeyTier]}
	l4t, ok := host.ParseL4T(m.L4T)
	if !ok {
		return m, fmt.Errorf("%s %q is not an L4T version such as 36.4.3", matrix.KeyL4T, m.L4T)
	}
	cuda, err := computecap.ParseCUDAVersion(m.CUDA)
	if err != nil {
		return m, fmt.Errorf("%s %q: %w", matrix.KeyCUDA, m.CUDA, err)
	}
	m.image = host.Image{JetPack: m.JetPack, L4T: l4t, CUDA: cuda}
	for _, s := range strings.Split(kv[matrix.KeySMTargets], ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		c, err := computecap.Parse(s)
		if err != nil {
			return m, fmt.Errorf("%s %q: %w", matrix.KeySMTargets, kv[matrix.KeySMTargets], err)
		}
		m.Targets = append(m.Targets, s)
		m.image.Targets = append(m.image.Targets, c)
	}
	if len(m.Targets) == 0 {
		return m, fmt.Errorf("%s is empty: the image holds no router binary", matrix.KeySMTargets)
	}
	return m, nil
}
