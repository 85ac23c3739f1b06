package e2e

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/matrix"
)

// checkAudit builds jetpack6.2 from the shipped Dockerfile, whose audit
// passes and is recorded (the metadata per SM, the io.jetbake.audit
// annotation), then with router-87 compiled for sm_80 (the release's
// target is 8.7): the audit refuses it with the file, what it holds, the
// target and the fix, and nothing is tagged.
func checkAudit(t *testing.T, f *fixture) {
	ctx := t.Context()
	p := f.demoPlan(t, "audit-shipped.json", only("audit-shipped", nil))
	f.pushBases(t, p, nil)
	report, err := f.build(ctx, p, imagebuild.WithPush(true))
	require.NoError(t, err)
	rr := report.Releases[0]
	require.Len(t, rr.Audit, 1)
	require.Equal(t, "8.7", rr.Audit[0].SM)
	require.Equal(t, "runs", rr.Audit[0].Verdict)
	router := rr.Audit[0].Files[0]
	require.Equal(t, "/usr/local/bin/router-87", router.Path)
	require.Equal(t, []string{"compute_87 PTX", "sm_87 cubin"}, router.Code[:2], "candle-flash-attn's kernels, compiled for CUDA_COMPUTE_CAP=87 (NVIDIA's real fat binary: PTX, then the cubin, as nvcc writes them)")
	require.Contains(t, router.Code, "sm_72 cubin", "cuBLAS's static kernels, for every SM of CUDA 12.6")
	ref, err := name.ParseReference(rr.Repository + "@" + rr.Digest)
	require.NoError(t, err)
	idx, err := remote.Index(ref)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Equal(t, "8.7=runs", im.Annotations[matrix.KeyAudit])
	record, err := json.Marshal(rr.Audit)
	require.NoError(t, err)
	t.Logf("the metadata's audit: %s", record)

	variant, err := OnlyWrongComputeCap(f.env.RepoRoot, filepath.Join(f.work, "dockerfiles"))
	require.NoError(t, err)
	wrong := f.demoPlan(t, "wrong-sm.json", variant)
	f.pushBases(t, wrong, nil)
	report, err = f.build(ctx, wrong, imagebuild.WithPush(true))
	require.Error(t, err)
	rr = report.Releases[0]
	require.Equal(t, imagebuild.Failed, rr.Outcome)
	require.Contains(t, rr.Error, AuditRefusalOfWrongSM+", the SM release "+WrongComputeCapRelease+" builds it for: it was compiled for another SM; "+
		"compile it with CUDA_COMPUTE_CAP=87")
	require.Contains(t, err.Error(), "no tag was put on for this run")
	t.Logf("the refusal: %s", rr.Error)
	require.Equal(t, "JIT", rr.Audit[0].Verdict, "compute_80 PTX would compile on Orin, not what the release compiled it for")
	require.Equal(t, []string{"compute_80 PTX", "sm_80 cubin"}, rr.Audit[0].Files[0].Code[:2])
	for _, tag := range wrong.Releases[0].Tags {
		ref, err := name.ParseReference(tag)
		require.NoError(t, err)
		_, err = remote.Head(ref)
		require.Error(t, err, "%s must not be tagged", tag)
	}
}
