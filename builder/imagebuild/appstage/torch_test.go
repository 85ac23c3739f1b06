package appstage

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/pydist"
	"github.com/jetbake/jetbake/computecap"
)

// A PyTorch app's base in which no torch distribution is found fails,
// naming the base; one with torch passes, and other frameworks need none.
func TestNoTorch(t *testing.T) {
	const base = "nvcr.io/nvidia/pytorch:25.08-py3-igpu"
	numpy := &pydist.Inventory{Dists: []pydist.Dist{{Name: "numpy", Version: "1.26.4", Path: "/usr/local/lib/python3.12/dist-packages/numpy-1.26.4.dist-info"}}}
	err := NoTorch(computecap.FrameworkPyTorch, base, "jetpack6.2", numpy)
	require.EqualError(t, err, "the base "+base+" of release jetpack6.2 holds no torch distribution (no torch-*.dist-info in a site-packages or dist-packages folder), "+
		"yet app.framework is pytorch: jetbake cannot check that the app keeps NVIDIA's torch; use NVIDIA's PyTorch container for the release "+
		"(nvcr.io/nvidia/pytorch, see docs/apps.md), or a base with its torch installed")
	require.NoError(t, NoTorch(computecap.FrameworkPyTorch, base, "jetpack6.2", &pydist.Inventory{Dists: []pydist.Dist{{Name: "torch", Version: "2.8.0", Path: "/t/torch-2.8.0.dist-info"}}}))
	require.NoError(t, NoTorch("", base, "jetpack6.2", numpy), "no framework, no torch needed")
}
