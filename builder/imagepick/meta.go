package imagepick

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
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
	// Facts is "declared" when the release rests on facts its matrix
	// declared (io.jetbake.facts).
	Facts string `json:"facts,omitempty"`
	// Audit is the build-time audit of the router binaries per SM target
	// (io.jetbake.audit: "8.7" -> "runs"); empty for an image built
	// before jetbake audited, or whose value is not one jetbake writes.
	Audit map[string]string `json:"audit,omitempty"`

	image hostfit.ImageClaims
}

// DeclaredJetPack is the JetPack row the image's matrix declared
// (io.jetbake.facts.jetpack), which the host rule adds to jetbake's table;
// nil when its release rests on jetbake's table alone.
func (m Meta) DeclaredJetPack() *computecap.JetPackRelease { return m.image.Declared }

// token reports whether s is 1 to 128 letters, digits and '.', '_', '+',
// '-': the form of a release name, a version and a JetPack version.
func token(s string) bool {
	if len(s) == 0 || len(s) > matrix.MaxNameLength {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)) {
			return false
		}
	}
	return true
}

// parseMeta reads the io.jetbake.* keys, failing with the key and value that
// cannot be read.
func parseMeta(kv map[string]string) (Meta, error) {
	m := Meta{Release: kv[matrix.KeyRelease], Version: kv[matrix.KeyVersion], JetPack: kv[matrix.KeyJetPack], L4T: kv[matrix.KeyL4T],
		CUDA: kv[matrix.KeyCUDA], Tier: kv[matrix.KeyTier]}
	// A registry chose these values: keep only what jetbake writes.
	for key, v := range map[string]string{matrix.KeyRelease: m.Release, matrix.KeyVersion: m.Version, matrix.KeyJetPack: m.JetPack} {
		if v != "" && !token(v) {
			return Meta{}, fmt.Errorf("%s %s is not a value jetbake writes", key, computecap.QuoteShort(v))
		}
	}
	if m.Tier != "" && !slices.Contains(matrix.Tiers(), m.Tier) {
		return Meta{}, fmt.Errorf("%s %s is not a tier (%s)", matrix.KeyTier, computecap.QuoteShort(m.Tier), strings.Join(matrix.Tiers(), ", "))
	}
	l4t, err := computecap.ParseL4TVersion(m.L4T)
	if err != nil {
		return Meta{}, fmt.Errorf("%s %s is not an L4T version such as 36.4.3", matrix.KeyL4T, computecap.QuoteShort(m.L4T))
	}
	cuda, err := computecap.ParseCUDAVersion(m.CUDA)
	if err != nil {
		return Meta{}, fmt.Errorf("%s: %w", matrix.KeyCUDA, err)
	}
	m.image = hostfit.ImageClaims{JetPack: m.JetPack, L4T: l4t, CUDA: cuda}
	if kv[matrix.KeyFacts] == matrix.FactsDeclared {
		m.Facts = matrix.FactsDeclared
		if v := kv[matrix.KeyFactsJetPack]; v != "" {
			row, err := matrix.ParseDeclaredJetPack(v)
			if err != nil {
				return Meta{}, fmt.Errorf("%s %s is not a JetPack row jetbake writes: %w", matrix.KeyFactsJetPack, computecap.QuoteShort(v), err)
			}
			m.image.Declared = &row
		}
	}
	for _, s := range strings.Split(kv[matrix.KeySMTargets], ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		c, err := computecap.Parse(s)
		if err != nil {
			return Meta{}, fmt.Errorf("%s: %w", matrix.KeySMTargets, err)
		}
		m.Targets = append(m.Targets, s)
		m.image.Targets = append(m.image.Targets, c)
	}
	if len(m.Targets) == 0 {
		return Meta{}, fmt.Errorf("%s is empty: the image holds no router binary", matrix.KeySMTargets)
	}
	m.Audit = parseAudit(kv[matrix.KeyAudit], m.Targets)
	return m, nil
}

// parseAudit reads io.jetbake.audit, "8.7=runs,11.0=JIT", for the image's
// targets (matrix.ParseAudit); nil when it is absent or not what jetbake
// writes (the preference it feeds is no reason to refuse an image).
func parseAudit(v string, targets []string) map[string]string {
	entries, ok := matrix.ParseAudit(v)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, e := range entries {
		if !slices.Contains(targets, e.SM) {
			return nil
		}
		out[e.SM] = e.Verdict
	}
	return out
}

// auditCovers reports whether the image's audit says the router its
// entrypoint picks for gpu holds code that runs there (a cubin, or PTX
// compiled when loaded).
func (m Meta) auditCovers(gpu computecap.Capability) bool {
	_, verdict, ok := m.auditFor(gpu)
	return ok && (verdict == computecap.Runs.String() || verdict == computecap.JIT.String())
}

// auditFor is the router the image's entrypoint picks for gpu and what the
// image's audit says of it; ok is false when no router serves gpu or the
// audit does not name that router's SM.
func (m Meta) auditFor(gpu computecap.Capability) (picked computecap.Capability, verdict string, ok bool) {
	picked, err := computecap.Pick(gpu, m.image.Targets)
	if err != nil {
		return picked, "", false
	}
	for sm, v := range m.Audit {
		if c, err := computecap.Parse(sm); err == nil && c == picked {
			return picked, v, true
		}
	}
	return picked, "", false
}
