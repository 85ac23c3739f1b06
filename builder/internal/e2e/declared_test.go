package e2e

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/nvtoolkit"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
)

// checkDeclaredRelease: DeclaredRelease was built under QEMU (the recipe
// knows no CUDA 13.3 devel image), its audit found each SM's code, and its
// report and annotations say it rests on declared facts, with the row.
func checkDeclaredRelease(t *testing.T, report *imagebuild.Report) {
	t.Helper()
	var rr *imagebuild.ReleaseReport
	for i := range report.Releases {
		if report.Releases[i].Name == DeclaredRelease {
			rr = &report.Releases[i]
		}
	}
	require.NotNil(t, rr, "the build has the declared release")
	require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
	require.Equal(t, "qemu", rr.BuildPath)
	require.Equal(t, matrix.FactsDeclared, rr.Facts)
	require.Equal(t, []string{"8.7", "11.0"}, rr.Targets)
	require.Len(t, rr.Audit, 2)
	for _, a := range rr.Audit {
		require.Equal(t, "runs", a.Verdict, "the audit of SM %s", a.SM)
	}
	require.Equal(t, matrix.FactsDeclared, rr.Annotations[matrix.KeyFacts])
	row, err := matrix.ParseDeclaredJetPack(rr.Annotations[matrix.KeyFactsJetPack])
	require.NoError(t, err)
	require.Equal(t, DeclaredRows().JetPacks[0], row)
}

// The declared facts are a 7.2 row with 7.3's versions that jetbake's
// table takes, and the 7.3 host views are what NVIDIA's runtime shows on
// R39: their driver at the folder R39's CSV files name, which the declared
// row's driver_dirs list for the host's GPU.
func TestDeclaredHostViews(t *testing.T) {
	rows := DeclaredRows()
	table, probs := computecap.DefaultTable().Declare(rows)
	require.Empty(t, probs)
	var again computecap.Facts
	require.NoError(t, json.Unmarshal([]byte(DeclaredFacts), &again))
	require.Equal(t, rows, again)
	line, ok := nvtoolkit.LineOf(39)
	require.True(t, ok)
	for _, h := range DeclaredHostViews() {
		soc, ok := table.SoCByID(h.SocID)
		require.True(t, ok)
		require.Equal(t, line.Libcuda(soc.Family), h.DriverDir()+"/libcuda.so.1", h.Name)
		require.NotEmpty(t, h.Devices(), h.Name)
		cudaV, ok := table.DriverCUDAForL4T(computecap.L4TVersion{Major: 39, Minor: 3})
		require.True(t, ok)
		require.Equal(t, cudaV, h.DriverCUDA, "the driver of the declared row")
		h.Declared = computecap.Facts{}
		require.Empty(t, h.DriverDir(), "%s: jetbake's own table knows no L4T 39.3.0", h.Name)
	}
}
