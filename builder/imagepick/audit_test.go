package imagepick

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
)

// Among the images that fit, pick prefers those whose build-time audit
// (io.jetbake.audit) covers the router its entrypoint picks for the host's
// GPU, before the exact JetPack release; a value jetbake does not write
// counts as no audit, and refuses nothing.
func TestPickPrefersAuditedImages(t *testing.T) {
	meta := func(release, jetpack, audit string) Meta {
		kv := map[string]string{matrix.KeyRelease: release, matrix.KeyJetPack: jetpack, matrix.KeyL4T: "36.4.3",
			matrix.KeyCUDA: "12.6", matrix.KeySMTargets: "8.7,11.0", matrix.KeyAudit: audit}
		m, err := parseMeta(kv)
		require.NoError(t, err)
		return m
	}
	images := []image{
		{digest: "sha256:a", tags: []string{"exact"}, meta: meta("jetpack6.2", "6.2", "")},
		{digest: "sha256:b", tags: []string{"audited"}, meta: meta("jetpack6.1", "6.1", "8.7=runs,11.0=runs")},
		{digest: "sha256:c", tags: []string{"thor-only"}, meta: meta("jetpack6.0", "6.0", "8.7=no code,11.0=runs")},
		{digest: "sha256:d", tags: []string{"garbage"}, meta: meta("jetpack5.9", "5.9", "8.7=runs,9.9=runs")},
	}
	fits := func(hostfit.Host, hostfit.ImageClaims) hostfit.Verdict { return hostfit.Verdict{OK: true} }
	host := hostfit.Host{GPU: computecap.MustParse("8.7"), JetPack: "6.2"}
	got := judge("r", host, images, fits)
	var order []string
	for _, c := range got {
		order = append(order, c.Tag)
	}
	require.Equal(t, []string{"audited", "exact", "garbage", "thor-only"}, order)
	require.True(t, got[0].AuditCovers)
	require.Equal(t, map[string]string{"8.7": "runs", "11.0": "runs"}, got[0].Meta.Audit)
	require.Nil(t, got[2].Meta.Audit, "9.9 is not a target of the image")

	thor := hostfit.Host{GPU: computecap.MustParse("11.0")}
	got = judge("r", thor, images, fits)
	require.True(t, got[0].AuditCovers)
	require.True(t, got[1].AuditCovers, "router-110 of thor-only holds code for Thor")
	require.Equal(t, "thor-only", got[1].Tag)
}

// TestExplainSaysAudit: --explain says in one line per image that fits how
// its audit weighed: preferred, ranked down for an audit without code for
// the host's SM, ranked down for no audit; and, when no image is audited,
// that the audit changed nothing.
func TestExplainSaysAudit(t *testing.T) {
	meta := func(audit string) Meta {
		m, err := parseMeta(map[string]string{matrix.KeyRelease: "jetpack6.2", matrix.KeyJetPack: "6.2", matrix.KeyL4T: "36.4.3",
			matrix.KeyCUDA: "12.6", matrix.KeySMTargets: "8.7,11.0", matrix.KeyAudit: audit})
		require.NoError(t, err)
		return m
	}
	fits := func(hostfit.Host, hostfit.ImageClaims) hostfit.Verdict {
		return hostfit.Verdict{OK: true, Reason: "fits"}
	}
	host := hostfit.Host{GPU: computecap.MustParse("8.7"), JetPack: "6.2"}
	explain := func(images ...image) string {
		r := &Result{Host: host, Candidates: judge("r", host, images, fits)}
		var b strings.Builder
		require.NoError(t, r.WriteExplain(&b))
		return b.String()
	}
	out := explain(
		image{digest: "sha256:a", tags: []string{"plain"}, meta: meta("")},
		image{digest: "sha256:b", tags: []string{"audited"}, meta: meta("8.7=JIT,11.0=runs")},
		image{digest: "sha256:c", tags: []string{"thor-only"}, meta: meta("8.7=no code,11.0=runs")})
	require.Contains(t, out, "r:audited@sha256:b\n        JetPack 6.2, L4T 36.4.3, CUDA 12.6, SM 8.7,11.0, tier \n        fits; the host's exact JetPack release\n"+
		"        audit: preferred: its build-time audit found PTX compiled for it when loaded (JIT) in the router for SM 8.7, the one picked for SM 8.7\n")
	require.Contains(t, out, "        audit: ranked below the images whose audit covers SM 8.7: its build-time audit found no code for SM 8.7 in the router for SM 8.7 (io.jetbake.audit says \"no code\")\n")
	require.Contains(t, out, "        audit: ranked below the images whose audit covers SM 8.7: the image has no build-time audit (no valid io.jetbake.audit")
	require.Equal(t, 3, strings.Count(out, "\n        audit: "), "one line per image")

	out = explain(image{digest: "sha256:a", tags: []string{"plain"}, meta: meta("")})
	require.Contains(t, out, "audit: the image has no build-time audit")
	require.Contains(t, out, "; no image that fits has an audit that covers SM 8.7, so it ranks as the others\n")
}

// TestExplainSaysPartial: an audit that says "partial" for the router
// picked (jetbake never writes it for a router, which it refuses, but
// another writer may) does not cover the host's SM, and --explain says why
// in the audit's words.
func TestExplainSaysPartial(t *testing.T) {
	m, err := parseMeta(map[string]string{matrix.KeyRelease: "jetpack6.2", matrix.KeyJetPack: "6.2", matrix.KeyL4T: "36.4.3",
		matrix.KeyCUDA: "12.6", matrix.KeySMTargets: "8.7,11.0", matrix.KeyAudit: "8.7=partial,11.0=runs"})
	require.NoError(t, err)
	require.Equal(t, "partial", m.Audit["8.7"])
	fits := func(hostfit.Host, hostfit.ImageClaims) hostfit.Verdict {
		return hostfit.Verdict{OK: true, Reason: "fits"}
	}
	host := hostfit.Host{GPU: computecap.MustParse("8.7")}
	r := &Result{Host: host, Candidates: judge("r", host, []image{{digest: "sha256:p", tags: []string{"partial"}, meta: m}}, fits)}
	require.False(t, r.Candidates[0].AuditCovers)
	var b strings.Builder
	require.NoError(t, r.WriteExplain(&b))
	require.Contains(t, b.String(), "audit: its build-time audit found code for SM 8.7 in only some fat binaries of the router for SM 8.7 "+
		"(io.jetbake.audit says \"partial\": the others hold only other GPUs' kernels, which fail if launched)")
}
