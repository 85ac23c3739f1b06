package appstage

import (
	"fmt"

	"github.com/jetbake/jetbake/builder/pydist"
	"github.com/jetbake/jetbake/computecap"
)

// NoTorch refuses the base of a release whose app's framework is PyTorch
// when its inventory holds no torch distribution: with none, the vendor
// stack check would pass whatever the app installs.
func NoTorch(framework, base, release string, inv *pydist.Inventory) error {
	if framework != computecap.FrameworkPyTorch || inv.HasTorch() {
		return nil
	}
	return fmt.Errorf("the base %s of release %s holds no torch distribution (no torch-*.dist-info in a site-packages or dist-packages folder), "+
		"yet app.framework is %s: jetbake cannot check that the app keeps NVIDIA's torch; use NVIDIA's PyTorch container for the release "+
		"(nvcr.io/nvidia/pytorch, see docs/apps.md), or a base with its torch installed", base, release, computecap.FrameworkPyTorch)
}
