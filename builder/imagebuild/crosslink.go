package imagebuild

import (
	"github.com/jetbake/jetbake/builder/imagebuild/buildfailure"
	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
)

// describeCrossLink turns err, a failed build whose step printed out, into
// a buildfailure.CrossLinkError when the release took the cross path and
// the linker refused a file of the wrong architecture; else it returns err.
func (j *releaseJob) describeCrossLink(err error, out string) error {
	if j.buildPath().Path != emulation.PathCross {
		return err
	}
	return buildfailure.CrossLink(j.release.Name, j.release.CrossBuildBase, err, out)
}
