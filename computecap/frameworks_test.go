package computecap_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// The lookup finds a row by reference, with a digest or on a mirror, and
// says "no row" for tags the table does not know.
func TestFrameworkContainerOf(t *testing.T) {
	tab := computecap.DefaultTable()
	for _, ref := range []string{
		"nvcr.io/nvidia/pytorch:25.06-py3-igpu",
		"nvcr.io/nvidia/pytorch:25.06-py3-igpu@sha256:" + strings.Repeat("a", 64),
		"127.0.0.1:5000/nvidia/pytorch:25.06-py3-igpu",
	} {
		row, ok := tab.FrameworkContainerOf(ref)
		require.True(t, ok, ref)
		require.Equal(t, "6.2", row.Line, ref)
		require.Equal(t, computecap.FlavourTegra, row.Flavour, ref)
		require.Equal(t, "12.9", row.CUDA)
		require.Equal(t, "2.8.0a0", row.PyTorch)
		require.Equal(t, "3.12", row.Python)
		require.Contains(t, row.Source, "https://")
	}
	for ref, line := range map[string]string{
		"nvcr.io/nvidia/pytorch:23.06-py3-igpu": "5.1",
		"nvcr.io/nvidia/pytorch:24.05-py3-igpu": "6.0", "nvcr.io/nvidia/pytorch:24.08-py3-igpu": "6.0",
		"nvcr.io/nvidia/pytorch:24.09-py3-igpu": "6.1", "nvcr.io/nvidia/pytorch:25.01-py3-igpu": "6.1",
		"nvcr.io/nvidia/pytorch:25.02-py3-igpu": "6.2",
		"nvcr.io/nvidia/pytorch:25.08-py3":      "7.0", "nvcr.io/nvidia/pytorch:25.11-py3": "7.0",
		"nvcr.io/nvidia/pytorch:25.12-py3": "7.1", "nvcr.io/nvidia/pytorch:26.03-py3": "7.1",
		"nvcr.io/nvidia/pytorch:26.02-py3-igpu": "7.2",
	} {
		row, ok := tab.FrameworkContainerOf(ref)
		require.True(t, ok, ref)
		require.Equal(t, line, row.Line, ref)
		if line >= "7.0" && line < "7.2" {
			require.Equal(t, computecap.FlavourSBSA, row.Flavour, ref)
		}
	}
	// 25.08-py3, the container jetbake init writes for JetPack 7.0, has
	// its versions from its release notes (issue 51 item 7: plan said
	// "torch unknown, Python unknown" for init's own matrix).
	row, _ := tab.FrameworkContainerOf("nvcr.io/nvidia/pytorch:25.08-py3")
	require.Equal(t, "25.08-py3", row.Tag)
	require.Equal(t, []string{"13.0", "2.8.0a0", "3.12"}, []string{row.CUDA, row.PyTorch, row.Python})
	require.Contains(t, row.Source, "rel-25-08")
	// Unknown values stay empty rather than guessed.
	row, _ = tab.FrameworkContainerOf("nvcr.io/nvidia/pytorch:25.09-py3")
	require.Equal(t, "unknown", computecap.Unknown(row.CUDA))
	require.Equal(t, "unknown", computecap.Unknown(row.PyTorch))
	for _, ref := range []string{
		"nvcr.io/nvidia/pytorch:25.07-py3-igpu", // NGC published no 25.07
		"nvcr.io/nvidia/pytorch:26.06-py3",      // newer than the table
		"nvcr.io/nvidia/pytorch:25.06-py3",      // the server build of a Jetson month
		"ghcr.io/acme/pytorch:25.06-py3-igpu",
	} {
		_, ok := tab.FrameworkContainerOf(ref)
		require.False(t, ok, ref)
	}
	fw, ok := tab.FrameworkRepositoryOf("nvcr.io/nvidia/pytorch:26.06-py3")
	require.True(t, ok)
	require.Equal(t, computecap.FrameworkPyTorch, fw)
	_, ok = tab.FrameworkRepositoryOf("nvcr.io/nvidia/l4t-jetpack:r36.4.0")
	require.False(t, ok)
}

// The fix for a release names the newest container of its line.
func TestFrameworkContainersFor(t *testing.T) {
	tab := computecap.DefaultTable()
	for jp, tag := range map[string]string{"6.2": "25.06-py3-igpu", "6.2.1": "25.06-py3-igpu", "6.1": "25.01-py3-igpu",
		"7.0": "25.11-py3", "7.1": "26.03-py3", "5.1.2": "23.06-py3-igpu"} {
		rows := tab.FrameworkContainersFor(computecap.FrameworkPyTorch, jp)
		require.NotEmpty(t, rows, jp)
		require.Equal(t, tag, rows[0].Tag, jp)
	}
	require.Empty(t, tab.FrameworkContainersFor(computecap.FrameworkPyTorch, "6.20"))
}
