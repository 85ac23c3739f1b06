package computecap

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every JetPack release from JetPack 5 on names where each of its SoCs
// holds the CUDA driver; JetPack 7.2 keeps one folder per GPU driver.
func TestDriverDirFor(t *testing.T) {
	tab := DefaultTable()
	tests := []struct {
		l4t, family, want string
	}{
		{"35.4.1", "Xavier", "/usr/lib/aarch64-linux-gnu/tegra"},
		{"35.4.1", "Orin", "/usr/lib/aarch64-linux-gnu/tegra"},
		{"36.4.3", "Orin", "/usr/lib/aarch64-linux-gnu/nvidia"},
		{"38.2.0", "Thor", "/usr/lib/aarch64-linux-gnu/nvidia"},
		{"39.2.0", "Orin", "/opt/nvidia/l4t-gpu-libs/nvgpu"},
		{"39.2.1", "Thor", "/opt/nvidia/l4t-gpu-libs/openrm"},
		{"39.2.0", "Xavier", ""},
	}
	for _, tt := range tests {
		v, err := ParseL4TVersion(tt.l4t)
		require.NoError(t, err)
		r, ok := tab.ReleaseForL4T(v)
		require.True(t, ok, tt.l4t)
		require.Equal(t, tt.want, r.DriverDirFor(tt.family), "%s on %s", tt.l4t, tt.family)
	}
	for _, r := range tab.Releases() {
		for _, s := range tab.SoCs {
			if s.Supports(r.JetPack) {
				require.NotEmpty(t, r.DriverDirFor(s.Family), "JetPack %s on %s", r.JetPack, s.Family)
			}
		}
	}
	require.Equal(t, []string{"/opt/nvidia/l4t-gpu-libs/nvgpu", "/opt/nvidia/l4t-gpu-libs/openrm",
		"/usr/lib/aarch64-linux-gnu/nvidia", "/usr/lib/aarch64-linux-gnu/tegra"}, tab.DriverDirs(), "each once, newest first")
}
