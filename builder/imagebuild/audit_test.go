package imagebuild

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
)

// code reads what an nvcc-shaped ELF file with one fat binary per module holds.
func code(t *testing.T, path, role string, modules ...[]fatbintest.Code) cudaCode {
	t.Helper()
	c, err := readCUDACode(path, role, bytes.NewReader(fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", modules...))))
	require.NoError(t, err)
	return c
}

// The build-time audit: a router passes for its SM only with a cubin that
// runs in every fat binary; a router compiled for sm_80 (its PTX would
// JIT on Orin, the cuBLAS kernels linked in run) is refused with the
// file, what it holds, the target and the fix; a library passes with
// PTX (JIT, recorded) and fails without code for a target.
func TestAuditRelease(t *testing.T) {
	p := testPlan()
	j := &releaseJob{plan: p, release: p.Releases[1]}
	cublas := []fatbintest.Code{fatbintest.Cubin("8.7"), fatbintest.Cubin("11.0"), fatbintest.PTX("11.0")}
	flash := func(sm string) []fatbintest.Code { return []fatbintest.Code{fatbintest.Cubin(sm), fatbintest.PTX(sm)} }
	j.routerCode = []cudaCode{
		code(t, "/usr/local/bin/router-87", roleRouter, flash("8.7"), cublas),
		code(t, "/usr/local/bin/router-110", roleRouter, flash("11.0"), cublas),
	}
	audits, err := j.recordAudit()
	require.NoError(t, err)
	require.Len(t, audits, 2)
	require.Equal(t, "8.7", audits[0].SM)
	require.Equal(t, "runs", audits[0].Verdict)
	require.Equal(t, []AuditedFile{{Path: "/usr/local/bin/router-87", Role: roleRouter,
		Code:    []string{"sm_87 cubin", "compute_87 PTX", "sm_110 cubin", "compute_110 PTX"},
		Verdict: "runs", Reason: audits[0].Files[0].Reason}}, audits[0].Files)
	require.Len(t, audits[1].Files, 1, "router-87 is judged for 8.7 only")

	j.routerCode[0] = code(t, "/usr/local/bin/router-87", roleRouter, flash("8.0"), cublas)
	audits, err = j.recordAudit()
	require.EqualError(t, err, "audit: /usr/local/bin/router-87 holds sm_80 cubin and compute_80 PTX in one of its CUDA fat binaries "+
		"and no cubin for Jetson Orin, SM 8.7, the SM release jetpack7.2 builds it for: it was compiled for another SM; "+
		"compile it with CUDA_COMPUTE_CAP=87 (jetbake passes each target's; check that the Dockerfile and the build arguments do not set another)")
	require.Equal(t, "JIT", audits[0].Verdict, "compute_80 PTX compiles on Orin: not what the release compiled it for")
	require.Equal(t, j.audit, audits, "recorded for the report")

	j.routerCode[0] = code(t, "/usr/local/bin/router-87", roleRouter, flash("8.7"), cublas)
	j.libraryCode = []cudaCode{code(t, "/usr/local/cuda/lib64/libcublasLt.so.13", roleLibrary, []fatbintest.Code{fatbintest.Cubin("11.0"), fatbintest.PTX("8.0")})}
	audits, err = j.recordAudit()
	require.NoError(t, err)
	require.Equal(t, "JIT", audits[0].Verdict)
	require.Equal(t, "runs", audits[1].Verdict)
	require.Len(t, audits[0].Files, 2)

	j.libraryCode = []cudaCode{code(t, "/usr/lib/libx.so", roleLibrary, []fatbintest.Code{fatbintest.Cubin("9.0")})}
	_, err = j.recordAudit()
	require.EqualError(t, err, "audit: /usr/lib/libx.so, a library the routers load, holds sm_90 cubin in one of its CUDA fat binaries "+
		"and no code for Jetson Orin, SM 8.7, an SM target of release jetpack7.2: install CUDA 13.2's libraries built for Jetson "+
		"(NVIDIA's JetPack repository, not an SBSA or x86 build) in the runtime stage")

	j.routerCode, j.libraryCode = []cudaCode{{path: "/usr/local/bin/router-87", role: roleRouter}}, nil
	audits, err = j.recordAudit()
	require.NoError(t, err)
	require.Equal(t, "none", audits[0].Verdict, "a router without a fat binary (candle's kernels are PTX strings)")
	_, err = readCUDACode("/x", roleRouter, bytes.NewReader([]byte("#!/bin/sh\necho a script of more than 64 bytes, which is not an ELF file at all\n")))
	require.True(t, isNotELF(err))
}
