package buildaudit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/computecap"
)

// TestAuditPartial: a library whose modules hold code for the target in
// some fat binaries and only other GPUs' kernels in the others (the
// issue's sm_72+sm_87 module beside an sm_72-only one, on Orin) is
// recorded as partial and not refused; a router jetbake compiled for the
// SM must hold code for it in every module, so one whose flash-attention
// module holds only sm_80 is still refused.
func TestAuditPartial(t *testing.T) {
	rel := Release{Name: "jetpack6.2", CUDA: "12.6", SMs: []string{"8.7"}}
	table := computecap.DefaultTable()
	c := fatbintest.Cubin
	lib := code(t, "/usr/lib/libjetson.so", RoleLibrary, []fatbintest.Code{c("7.2"), c("8.7")}, []fatbintest.Code{c("7.2")})
	router := code(t, "/usr/local/bin/router-87", RoleRouter, []fatbintest.Code{c("8.7")})
	audits, err := rel.Judge(table, []Code{router}, []Code{lib})
	require.NoError(t, err)
	require.Equal(t, "partial", audits[0].Verdict)
	require.Equal(t, "partial", audits[0].Files[1].Verdict)
	require.Contains(t, audits[0].Files[1].Reason, "1 of 2 fat binaries hold code for Jetson Orin, SM 8.7 (sm_87); 1 hold only sm_72 kernels")

	app := code(t, "/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so", RoleFile, []fatbintest.Code{c("8.7")}, []fatbintest.Code{c("9.0")})
	audits, err = rel.Judge(table, nil, []Code{app})
	require.NoError(t, err, "an app's file with a per-GPU module is not refused")
	require.Equal(t, "partial", audits[0].Verdict)

	flash := code(t, "/usr/local/bin/router-87", RoleRouter, []fatbintest.Code{c("8.7"), fatbintest.PTX("8.7")}, []fatbintest.Code{c("8.0")})
	_, err = rel.Judge(table, []Code{flash}, nil)
	require.EqualError(t, err, "audit: /usr/local/bin/router-87 holds sm_80 cubin in one of its CUDA fat binaries and no cubin for Jetson Orin, SM 8.7, "+
		"the SM release jetpack6.2 builds it for: it was compiled for another SM; compile it with CUDA_COMPUTE_CAP=87 "+
		"(jetbake passes each target's; check that the Dockerfile and the build arguments do not set another)")
	_, err = rel.Annotation(table, []Code{flash})
	require.ErrorContains(t, err, "audit: /usr/local/bin/router-87 holds sm_80 cubin")
}

// TestAuditNVIDIALibraries: the build reads NVIDIA's real cuBLAS 11.8
// (SBSA, arm64) as it reads a router's libraries. For SM 9.0 and 8.6 it
// is partial and not refused; for Orin no module holds sm_87, so it is
// refused, naming what it holds; libcudart holds no GPU code and passes.
func TestAuditNVIDIALibraries(t *testing.T) {
	parts, err := nvreal.Find(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	read := func(name string) Code {
		f, err := os.Open(filepath.Join(parts.LibDir(), name))
		require.NoError(t, err)
		defer f.Close()
		c, err := Read("/usr/lib/aarch64-linux-gnu/"+name, RoleLibrary, f)
		require.NoError(t, err)
		return c
	}
	cublas, cudart := read("libcublas.so.11.11.3.6"), read("libcudart.so.11.8.89")
	require.Len(t, cublas.modules, 225)
	require.Empty(t, cudart.modules)
	table := computecap.DefaultTable()
	dgpu := Release{Name: "sbsa", CUDA: "11.8", SMs: []string{"9.0", "8.6"}}
	audits, err := dgpu.Judge(table, nil, []Code{cublas, cudart})
	require.NoError(t, err)
	for _, a := range audits {
		require.Equal(t, "partial", a.Verdict, a.SM)
		require.Len(t, a.Files, 1, "libcudart holds no fat binary")
	}
	require.Contains(t, audits[0].Files[0].Reason, "188 of 225 fat binaries hold code for GPU with SM 9.0 (sm_90); 37 hold only sm_35, sm_50, sm_60 and sm_61 kernels")

	orin := Release{Name: "jetpack5.1", CUDA: "11.8", SMs: []string{"8.7"}}
	audits, err = orin.Judge(table, nil, []Code{cublas, cudart})
	require.ErrorContains(t, err, "audit: /usr/lib/aarch64-linux-gnu/libcublas.so.11.11.3.6, a library the routers load, holds sm_35 cubin and ")
	require.ErrorContains(t, err, "and no code for Jetson Orin, SM 8.7, an SM target of release jetpack5.1")
	require.Equal(t, "no code", audits[0].Verdict)
	audits, err = orin.Judge(table, nil, []Code{cudart})
	require.NoError(t, err)
	require.Equal(t, "none", audits[0].Verdict)
}
