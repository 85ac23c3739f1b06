package imagepick

import (
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
	fits := func(hostfit.Facts, hostfit.Image) hostfit.Verdict { return hostfit.Verdict{OK: true} }
	host := hostfit.Facts{GPU: computecap.MustParse("8.7"), JetPack: "6.2"}
	got := judge("r", host, images, fits)
	var order []string
	for _, c := range got {
		order = append(order, c.Tag)
	}
	require.Equal(t, []string{"audited", "exact", "garbage", "thor-only"}, order)
	require.True(t, got[0].AuditCovers)
	require.Equal(t, map[string]string{"8.7": "runs", "11.0": "runs"}, got[0].Meta.Audit)
	require.Nil(t, got[2].Meta.Audit, "9.9 is not a target of the image")

	thor := hostfit.Facts{GPU: computecap.MustParse("11.0")}
	got = judge("r", thor, images, fits)
	require.True(t, got[0].AuditCovers)
	require.True(t, got[1].AuditCovers, "router-110 of thor-only holds code for Thor")
	require.Equal(t, "thor-only", got[1].Tag)
}
