package detect

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

func TestBestSibling(t *testing.T) {
	data, err := os.ReadFile(eptest.Testdata("images", "jetpack7.2.json"))
	require.NoError(t, err)
	spec, err := imagespec.Parse(data)
	require.NoError(t, err)
	img, err := parseImage(spec)
	require.NoError(t, err)
	orin, thor := computecap.MustParse("8.7"), computecap.MustParse("10.1")
	l4t := func(s string) *Host {
		v, err := computecap.ParseL4TVersion(s)
		require.NoError(t, err)
		return &Host{table: computecap.DefaultTable(), Facts: &host.Facts{L4T: v, HasL4T: true}}
	}
	tests := []struct {
		name string
		q    siblingQuery
		want string
	}{
		{"R36.4.7 host: newest JetPack 6 not newer than the host", siblingQuery{gpu: &orin, host: l4t("36.4.7")}, "jetpack6.2"},
		{"R36.3.0 host", siblingQuery{gpu: &orin, host: l4t("36.3.0")}, "jetpack6.0"},
		{"R36.2.0 host: every JetPack 6 image needs a newer L4T", siblingQuery{gpu: &orin, host: l4t("36.2.0")}, ""},
		{"Thor on R38", siblingQuery{gpu: &thor, host: l4t("38.2.0")}, "jetpack7.0"},
		{"Thor on R36: none", siblingQuery{gpu: &thor, host: l4t("36.4.3")}, ""},
		{"Orin, host unknown: newest other release", siblingQuery{gpu: &orin}, "jetpack6.2"},
		{"Thor, host unknown", siblingQuery{gpu: &thor}, "jetpack7.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := bestSibling(img, tt.q)
			require.Equal(t, tt.want != "", ok)
			require.Equal(t, tt.want, s.Release)
		})
	}
}
