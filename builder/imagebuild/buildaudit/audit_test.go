package buildaudit

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/computecap"
)

// code reads what an nvcc-shaped ELF file with one fat binary per module holds.
func code(t *testing.T, path, role string, modules ...[]fatbintest.Code) Code {
	t.Helper()
	c, err := Read(path, role, bytes.NewReader(fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", modules...))))
	require.NoError(t, err)
	return c
}

// The build-time audit: a router passes for its SM only with a cubin that
// runs in every fat binary; a router compiled for sm_80 (its PTX would
// JIT on Orin, the cuBLAS kernels linked in run) is refused with the
// file, what it holds, the target and the fix; a library passes with
// PTX (JIT, recorded) and fails without code for a target.
func TestAuditRelease(t *testing.T) {
	rel := Release{Name: "jetpack7.2", CUDA: "13.2", SMs: []string{"8.7", "11.0"}}
	table := computecap.DefaultTable()
	cublas := []fatbintest.Code{fatbintest.Cubin("8.7"), fatbintest.Cubin("11.0"), fatbintest.PTX("11.0")}
	flash := func(sm string) []fatbintest.Code { return []fatbintest.Code{fatbintest.Cubin(sm), fatbintest.PTX(sm)} }
	routers := []Code{
		code(t, "/usr/local/bin/router-87", RoleRouter, flash("8.7"), cublas),
		code(t, "/usr/local/bin/router-110", RoleRouter, flash("11.0"), cublas),
	}
	audits, err := rel.Judge(table, routers, nil)
	require.NoError(t, err)
	require.Len(t, audits, 2)
	require.Equal(t, "8.7", audits[0].SM)
	require.Equal(t, "runs", audits[0].Verdict)
	require.Equal(t, []AuditedFile{{Path: "/usr/local/bin/router-87", Role: RoleRouter,
		Code:    []string{"sm_87 cubin", "compute_87 PTX", "sm_110 cubin", "compute_110 PTX"},
		Verdict: "runs", Reason: audits[0].Files[0].Reason}}, audits[0].Files)
	require.Len(t, audits[1].Files, 1, "router-87 is judged for 8.7 only")

	routers[0] = code(t, "/usr/local/bin/router-87", RoleRouter, flash("8.0"), cublas)
	audits, err = rel.Judge(table, routers, nil)
	require.EqualError(t, err, "audit: /usr/local/bin/router-87 holds sm_80 cubin and compute_80 PTX in one of its CUDA fat binaries "+
		"and no cubin for Jetson Orin, SM 8.7, the SM release jetpack7.2 builds it for: it was compiled for another SM; "+
		"compile it with CUDA_COMPUTE_CAP=87 (jetbake passes each target's; check that the Dockerfile and the build arguments do not set another)")
	require.Equal(t, "JIT", audits[0].Verdict, "compute_80 PTX compiles on Orin: not what the release compiled it for")
	require.Len(t, audits, 2, "every target's audit, for the report")

	routers[0] = code(t, "/usr/local/bin/router-87", RoleRouter, flash("8.7"), cublas)
	libraries := []Code{code(t, "/usr/local/cuda/lib64/libcublasLt.so.13", RoleLibrary, []fatbintest.Code{fatbintest.Cubin("11.0"), fatbintest.PTX("8.0")})}
	audits, err = rel.Judge(table, routers, libraries)
	require.NoError(t, err)
	require.Equal(t, "JIT", audits[0].Verdict)
	require.Equal(t, "runs", audits[1].Verdict)
	require.Len(t, audits[0].Files, 2)

	libraries = []Code{code(t, "/usr/lib/libx.so", RoleLibrary, []fatbintest.Code{fatbintest.Cubin("9.0")})}
	_, err = rel.Judge(table, routers, libraries)
	require.EqualError(t, err, "audit: /usr/lib/libx.so, a library the routers load, holds sm_90 cubin in one of its CUDA fat binaries "+
		"and no code for Jetson Orin, SM 8.7, an SM target of release jetpack7.2: install CUDA 13.2's libraries built for Jetson "+
		"(NVIDIA's JetPack repository, not an SBSA or x86 build) in the runtime stage")

	audits, err = rel.Judge(table, []Code{{Path: "/usr/local/bin/router-87", Role: RoleRouter}}, nil)
	require.NoError(t, err)
	require.Equal(t, "none", audits[0].Verdict, "a router without a fat binary (candle's kernels are PTX strings)")
	_, err = Read("/x", RoleRouter, bytes.NewReader([]byte("#!/bin/sh\necho a script of more than 64 bytes, which is not an ELF file at all\n")))
	require.True(t, IsNotELF(err))
}

// The annotation says each router's verdict for its own SM.
func TestAnnotation(t *testing.T) {
	rel := Release{Name: "jetpack7.2", CUDA: "13.2", SMs: []string{"8.7", "11.0"}}
	flash := func(sm string) []fatbintest.Code { return []fatbintest.Code{fatbintest.Cubin(sm), fatbintest.PTX(sm)} }
	routers := []Code{code(t, "/usr/local/bin/router-87", RoleRouter, flash("8.7")), {Path: "/usr/local/bin/router-110", Role: RoleRouter}}
	got, err := rel.Annotation(computecap.DefaultTable(), routers)
	require.NoError(t, err)
	require.Equal(t, "8.7=runs,11.0=none", got)
	routers[1] = code(t, "/usr/local/bin/router-110", RoleRouter, flash("8.7"))
	_, err = rel.Annotation(computecap.DefaultTable(), routers)
	require.ErrorContains(t, err, "audit: /usr/local/bin/router-110 holds sm_87 cubin and compute_87 PTX")
}

// An app image's file (an SBSA wheel's extension module, sm_75/80/90
// cubins and compute_90 PTX) is refused for Orin by name, with what it
// holds, the target and the fix; the framework's own library passes.
func TestAuditAppFiles(t *testing.T) {
	rel := Release{Name: "jetpack6.2", CUDA: "12.9", SMs: []string{"8.7"}}
	torch := code(t, "/usr/local/lib/python3.11/dist-packages/torch/lib/libtorch_cuda.so", RoleFile, []fatbintest.Code{fatbintest.Cubin("8.7")})
	audits, err := rel.Judge(computecap.DefaultTable(), nil, []Code{torch})
	require.NoError(t, err)
	require.Equal(t, "runs", audits[0].Verdict)

	bnb := NewCode("/opt/venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cuda126.so", RoleFile, [][]computecap.Code{{
		{Kind: computecap.Cubin, Target: computecap.MustParse("7.5")}, {Kind: computecap.Cubin, Target: computecap.MustParse("8.0")},
		{Kind: computecap.Cubin, Target: computecap.MustParse("9.0")}, {Kind: computecap.PTX, Target: computecap.MustParse("9.0")},
	}})
	audits, err = rel.Judge(computecap.DefaultTable(), nil, []Code{torch, bnb})
	require.EqualError(t, err, "audit: /opt/venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cuda126.so holds "+
		"sm_75 cubin and sm_80 cubin and sm_90 cubin and compute_90 PTX in one of its CUDA fat binaries and no code for Jetson Orin, SM 8.7, "+
		"an SM target of release jetpack6.2: it was built for other GPUs (a PyPI or SBSA wheel is not built for Jetson); install a build for Jetson instead "+
		"(built for compute capability 87, on the device or from a Jetson index such as jetson-ai-lab's), or leave the package out of the image")
	require.Equal(t, "no code", audits[0].Verdict)
	require.Equal(t, RoleFile, audits[0].Files[1].Role)
}
