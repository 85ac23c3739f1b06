package computecap

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJetPackForL4T(t *testing.T) {
	for major, want := range map[int]string{34: "5.0", 35: "5.0/5.1", 36: "6", 38: "7.0/7.1", 39: "7.2"} {
		got, ok := JetPackForL4T(major)
		require.True(t, ok, major)
		require.Equal(t, want, got)
	}
	for _, major := range []int{0, 32, 37, 40, -36} {
		_, ok := JetPackForL4T(major)
		require.False(t, ok, major)
	}
}

func TestL4TMajorForJetPack(t *testing.T) {
	tests := []struct {
		jetpack string
		want    int
	}{
		{"5", 35}, {"5.0.2", 35}, {"5.1", 35}, {"5.1.2", 35}, {"5.1.6", 35},
		{"5.0", 34}, {"5.0.1", 34}, // developer previews are R34, not R35
		{"6", 36}, {"6.0", 36}, {"6.1", 36}, {"6.2", 36}, {"6.2.1", 36}, {" 6.2 ", 36},
		{"7.0", 38}, {"7.1", 38}, {"7.0.1", 38},
		{"7.2", 39}, {"7.2.0", 39},
	}
	for _, tt := range tests {
		got, ok := L4TMajorForJetPack(tt.jetpack)
		require.True(t, ok, tt.jetpack)
		require.Equal(t, tt.want, got, tt.jetpack)
	}
	for _, jetpack := range []string{"", "7", "7.3", "6.3", "5.2", "4.6", "8.0", "r36", "6.", ".6",
		"6.2.1.1", "v6.2", "6,2", "36", "abc", "6.x"} {
		_, ok := L4TMajorForJetPack(jetpack)
		require.False(t, ok, jetpack)
	}
}

func TestJetPackReleases(t *testing.T) {
	releases := JetPackReleases()
	require.Len(t, releases, 13)
	for _, r := range releases {
		major, ok := L4TMajorForJetPack(r.JetPack)
		require.True(t, ok, r.JetPack)
		require.Equal(t, r.L4T[:2], strconv.Itoa(major), r.JetPack)
		series, ok := JetPackForL4T(major)
		require.True(t, ok)
		require.NotEmpty(t, series)
		found, ok := JetPackForL4TRelease(r.L4T)
		require.True(t, ok)
		require.Equal(t, r.JetPack, found.JetPack)
		require.NotEmpty(t, r.Capabilities)
		for _, c := range r.Capabilities {
			require.True(t, c.IsTegra())
			require.NoError(t, CanCompile(c, r.CUDA), "JetPack %s ships CUDA %v for %v", r.JetPack, r.CUDA, c)
		}
	}
	got, ok := JetPackForL4TRelease("36.4.3")
	require.True(t, ok)
	require.Equal(t, "6.2", got.JetPack)
	require.Equal(t, cuda(12, 6), got.CUDA)
	for l4t, jp := range map[string]string{"35.4.1": "5.1.2", "36.4.4": "6.2.1", "36.4.7": "6.2.1",
		"38.2.0": "7.0", "38.4.0": "7.1", "39.2.0": "7.2", "39.2.1": "7.2.1", "34.1.0": "5.0"} {
		got, ok := JetPackForL4TRelease(l4t)
		require.True(t, ok, l4t)
		require.Equal(t, jp, got.JetPack, l4t)
	}
	_, ok = JetPackForL4TRelease("36.4.5")
	require.False(t, ok)

	releases[0].Capabilities[0] = mk(1, 0)
	require.Equal(t, mk(7, 2), JetPackReleases()[0].Capabilities[0])
}
