package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// TestAuditStrict: a library of two fat binaries, one with an sm_87 cubin
// and one with sm_90 only (as NVIDIA ships per-GPU modules), is partial on
// an Orin: `jetbake audit` exits 0 with a warning, --strict exits 1.
func TestAuditStrict(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := testregistry.New(t)
	c := fatbintest.Cubin
	pushAuditImage(t, host+"/acme/lib:partial", "", map[string][]byte{
		"usr/lib/libmixed.so": fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", []fatbintest.Code{c("8.7"), c("7.2")}, []fatbintest.Code{c("9.0")})),
	})
	r := run(t, "audit", "-q", "--gpu", "8.7", host+"/acme/lib:partial")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "/usr/lib/libmixed.so  sm_72,sm_87,sm_90  -    partial (1 of 2 fatbins)")
	require.Contains(t, r.stdout, "1 of 2 fat binaries hold code for Jetson Orin, SM 8.7 (sm_87); 1 hold only sm_90 kernels, which fail if launched on this GPU")
	require.Contains(t, r.stderr, "audit: warning: some files are partial")
	r = run(t, "audit", "-q", "--strict", "--gpu", "8.7", host+"/acme/lib:partial")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	r = run(t, "audit", "-q", "--strict", "--gpu", "7.2", host+"/acme/lib:partial")
	require.Equal(t, 1, r.code, "on a Xavier too the second fat binary holds only sm_90: "+r.stdout)
	require.Contains(t, r.stdout, "partial (1 of 2 fatbins)")
	r = run(t, "audit", "-q", "--strict", "--gpu", "9.0", "--explain", host+"/acme/lib:partial")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stdout, "  SM 9.0: partial (the first without code: its fat binary 1 of 2, sm_72, sm_87 cubins): 1 of 2 fat binaries hold code for GPU with SM 9.0 (sm_90)")
}
