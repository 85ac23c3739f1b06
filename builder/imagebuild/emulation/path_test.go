package emulation

import (
	"testing"

	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/internal/buildtest"
)

func TestChoosePath(t *testing.T) {
	amd64 := buildtest.Workers([]string{"linux/amd64", "linux/arm64"})
	arm64 := buildtest.Workers([]string{"linux/arm64"})
	riscv := buildtest.Workers([]string{"linux/riscv64", "linux/arm64"})
	tests := []struct {
		name   string
		cross  bool
		forced string
		want   Path
		err    string
		nodes  []string
	}{
		{name: "arm64 node, cross base or not", cross: true, want: PathNative, nodes: []string{"arm64"}},
		{name: "arm64 node, forced cross", cross: true, forced: "cross", want: PathNative, nodes: []string{"arm64"}},
		{name: "amd64 node with a cross base", cross: true, want: PathCross, nodes: []string{"amd64"}},
		{name: "amd64 node without", want: PathQEMU, nodes: []string{"amd64"}},
		{name: "amd64 node, forced QEMU", cross: true, forced: "qemu", want: PathQEMU, nodes: []string{"amd64"}},
		{name: "forced cross without a cross base", forced: "cross", err: "has no cross_build_base", nodes: []string{"amd64"}},
		{name: "forced cross on riscv64", cross: true, forced: "cross", err: "native platform is linux/riscv64", nodes: []string{"riscv"}},
		{name: "riscv64 with a cross base", cross: true, want: PathQEMU, nodes: []string{"riscv"}},
		{name: "an unknown path", forced: "native", err: `build path "native": use cross or qemu`, nodes: []string{"amd64"}},
	}
	workers := map[string][]gateway.WorkerInfo{"amd64": amd64, "arm64": arm64, "riscv": riscv}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ChoosePath(workers[tt.nodes[0]], tt.cross, tt.forced)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, c.Path)
			require.NotEmpty(t, c.Reason)
		})
	}
}

// --build-path wins over the release's build_path, auto lets the path be
// chosen, and an app can only be forced onto QEMU.
func TestForced(t *testing.T) {
	require.Equal(t, "qemu", Forced("qemu", "", false))
	require.Equal(t, "cross", Forced("qemu", "cross", false))
	require.Empty(t, Forced("qemu", Auto, false))
	require.Equal(t, "qemu", Forced("", "qemu", true))
	require.Empty(t, Forced("", "cross", true), "an app's stage has no cross path")
}

// Each path in the words of `jetbake plan`'s build path line.
func TestDescribe(t *testing.T) {
	require.Equal(t, "cross in cross:6.2 (targets/aarch64-linux): why", Describe(Choice{Path: PathCross, Reason: "why"}, "cross:6.2", "aarch64-linux"))
	require.Equal(t, "QEMU: why", Describe(Choice{Path: PathQEMU, Reason: "why"}, "", ""))
	require.Equal(t, "native: why", Describe(Choice{Path: PathNative, Reason: "why"}, "", ""))
}
