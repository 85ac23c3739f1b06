package imagebuild

import "maps"

// initialReport is the release's report before it is built.
func (j *releaseJob) initialReport() ReleaseReport {
	rr := ReleaseReport{Name: j.release.Name, Outcome: Skipped, Tags: []string{}}
	for _, t := range j.release.Targets {
		rr.Targets = append(rr.Targets, t.SM)
	}
	j.fillReport(&rr)
	return rr
}

// fillReport records what the build learnt: base digests and annotations.
func (j *releaseJob) fillReport(rr *ReleaseReport) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rr.Bases = []Base{
		{Role: "build", Ref: j.release.BuildBase, Resolved: j.buildBase, Digest: j.buildDigest},
		{Role: "runtime", Ref: j.release.RuntimeBase, Resolved: j.runtimeBase, Digest: j.baseDigest},
	}
	rr.Annotations = maps.Clone(j.annotations)
	if rr.Digest != "" {
		rr.Repository = j.plan.Repository
	}
}
