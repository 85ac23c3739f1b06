package e2e

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/internal/standin"
)

// NativeNvccRelease is the only release of the QEMU path's real-compiler case.
const NativeNvccRelease = "jetpack6.2-nvcc-qemu"

// checkNativeNvcc builds JetPack 6.2 on the QEMU path (the test bed's
// node is amd64 and the release names no cross base) on a build base that
// carries NVIDIA's arm64 nvcc 11.8 and Debian's arm64 GCC 11 as
// build-essential (standin.Base.NativeNvcc): the toolchain stage's apt-get
// and the router stage's cargo run as the shipped Dockerfile runs them,
// and candle-flash-attn's build script runs NVIDIA's aarch64 nvcc, cicc,
// ptxas and fatbinary, then the arm64 binutils archive and link, all under
// QEMU. The router's kernels are nvcc's, as cuobjdump lists them.
func checkNativeNvcc(t *testing.T, f *fixture) {
	p := f.demoPlan(t, "native-nvcc.json", onlyVariant(NativeNvccRelease))
	rel := p.Releases[0]
	var base standin.Base
	for _, b := range standin.ForPlan(p) {
		if b.Ref == rel.BuildBase {
			base = b
		}
	}
	require.Equal(t, rel.BuildBase, base.Ref)
	base.NativeNvcc = true
	require.True(t, base.RealNvcc(), "JetPack 6.2's build base is a Tegra devel base")
	img := f.buildOne(t, p, base)
	parts, err := nvreal.Find(f.env.RepoRoot)
	require.NoError(t, err)
	cmp, err := parts.Compare(t.Context(), filepath.Join(img.Rootfs, "usr/local/bin/router-87"), t.TempDir())
	require.NoError(t, err)
	require.True(t, cmp.Agrees(), "jetbake %s; cuobjdump %s; %v", cmp.Jetbake, cmp.Cuobjdump, cmp.ModuleFaults)
	t.Logf("router-87, as cuobjdump lists it: %s", cmp.Cuobjdump)
	require.GreaterOrEqual(t, len(cmp.Cuobjdump), 4)
	require.Equal(t, "sm_87 cubin, sm_87 PTX, sm_87 cubin, sm_87 PTX", cmp.Cuobjdump[:4].String(),
		"nvcc's cubin and compressed PTX of each of the stand-in candle-flash-attn's two kernel files")
}
