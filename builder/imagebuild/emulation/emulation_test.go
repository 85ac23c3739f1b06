package emulation

import (
	"testing"

	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/internal/buildtest"
)

func TestNativeArm64(t *testing.T) {
	tests := []struct {
		name    string
		workers []gateway.WorkerInfo
		native  bool
	}{
		// buildkitd on an x86 machine with QEMU's binfmt handlers.
		{"x86 with QEMU", buildtest.Workers([]string{"linux/amd64", "linux/amd64/v2", "linux/386", "linux/arm64", "linux/arm/v7"}), false},
		{"arm64 runner", buildtest.Workers([]string{"linux/arm64", "linux/arm/v7", "linux/arm/v6"}), true},
		{"arm64 with variant", buildtest.Workers([]string{"linux/arm64/v8"}), true},
		{"32-bit arm is not arm64", buildtest.Workers([]string{"linux/arm/v7", "linux/arm64"}), false},
		{"a second worker native arm64", buildtest.Workers([]string{"linux/amd64", "linux/arm64"}, []string{"linux/arm64"}), true},
		{"no worker", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.native, NativeArm64(tt.workers))
		})
	}
	require.Equal(t, "linux/amd64", NativePlatform(buildtest.Workers([]string{"linux/amd64", "linux/arm64"})))
	require.Equal(t, "", NativePlatform(nil))
}
