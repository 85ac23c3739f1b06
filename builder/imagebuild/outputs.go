package imagebuild

import "github.com/jetbake/jetbake/builder/imagebuild/localoutput"

// placeOutputs moves a succeeded release's finished outputs into place, or
// removes them when keep is false. A release whose output cannot be placed
// counts as failed.
func placeOutputs(rr *ReleaseReport, keep bool) {
	if rr.Outcome != Succeeded {
		return
	}
	placed, err := localoutput.Place(rr.Outputs, keep)
	if err != nil {
		rr.Outcome, rr.Error = Failed, err.Error()
	}
	rr.Outputs = placed
}
