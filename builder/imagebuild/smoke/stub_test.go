package smoke

import (
	"path/filepath"
	"testing"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/solver/pb"
	"github.com/stretchr/testify/require"
)

// The cross path's stub is one file operation on the cross build base:
// nothing runs, so nothing runs under QEMU, and no arm64 image is pulled.
// Its pattern matches the stub alone, and a base without it gives an
// empty stub for the judge to name, not a failed copy.
func TestCrossStub(t *testing.T) {
	base := llb.Image("127.0.0.1:5000/jetbake/cross-build-base:cuda12.6-aarch64-linux-ubuntu22.04", llb.LinuxAmd64)
	def, err := CrossStub(base, "aarch64-linux").Marshal(t.Context())
	require.NoError(t, err)
	var copies []*pb.FileActionCopy
	var made []string
	for _, dt := range def.Def {
		var op pb.Op
		require.NoError(t, op.UnmarshalVT(dt))
		require.Nil(t, op.GetExec(), "no step runs")
		if src := op.GetSource(); src != nil {
			require.Contains(t, src.Identifier, "cross-build-base", "the only image is the cross build base")
			require.Equal(t, "amd64", op.Platform.Architecture)
		}
		for _, a := range op.GetFile().GetActions() {
			if c := a.GetCopy(); c != nil {
				copies = append(copies, c)
			}
			if m := a.GetMkfile(); m != nil {
				made = append(made, m.Path+"="+string(m.Data))
			}
		}
	}
	require.Len(t, copies, 1)
	c := copies[0]
	require.Equal(t, "/libcuda.so.1", c.Dest)
	require.True(t, c.AllowWildcard && c.AllowEmptyWildcard && c.FollowSymlink)
	for path, want := range map[string]bool{
		"/usr/local/cuda/targets/aarch64-linux/lib/stubs/libcuda.so":   true,
		"/usr/local/cuda/targets/aarch64-linux/lib/stubs/libcuda.so.1": false,
		"/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so":    false,
		"/usr/local/cuda/targets/aarch64-linux/lib/stubs/libcudx.so":   false,
		"/usr/local/cuda/targets/aarch64-linux/lib/stubx/libcuda.so":   false,
	} {
		ok, err := filepath.Match(c.Src, path)
		require.NoError(t, err)
		require.Equal(t, want, ok, path)
	}
	require.Equal(t, []string{"/from=/usr/local/cuda/targets/aarch64-linux/lib/stubs/libcuda.so\n"}, made)
}

// A smoke run without the cross build base's stub names that base, the
// path the cross package puts it at, and the package.
func TestJudgeNamesTheCrossBaseStub(t *testing.T) {
	s := testSpec()
	s.Stub = CrossBaseStub("the base jetbake's Dockerfile-cross-base builds FROM nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04", "sbsa-linux")
	read := func(name string) string {
		return map[string]string{"router-87.ldd": "\tlibcuda.so.1 => not found\n"}[name]
	}
	err := s.Judge(testImage, "ldd router-87 0\nrc router-87 127\nrc router-110 0\nca\n", nil, read)
	require.ErrorContains(t, err, "and the cross build base, the base jetbake's Dockerfile-cross-base builds FROM nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04, has none "+
		"(/usr/local/cuda/targets/sbsa-linux/lib/stubs/libcuda.so): install NVIDIA's CUDA cross package of the release (cuda-cross-aarch64-X-Y or cuda-cross-sbsa-X-Y) in it")
	s.Stub = CrossBaseStub("127.0.0.1:5000/jetbake/cross-build-base:cuda12.6", "aarch64-linux")
	err = s.Judge(testImage, "ldd router-87 0\nrc router-87 127\nrc router-110 0\nca\n", nil, read)
	require.ErrorContains(t, err, "and the cross build base 127.0.0.1:5000/jetbake/cross-build-base:cuda12.6 has none (/usr/local/cuda/targets/aarch64-linux/lib/stubs/libcuda.so)")
}
