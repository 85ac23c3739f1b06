package imagebuild

import (
	"maps"
	"slices"

	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/imagebuild/emulation"
	"github.com/jetbake/jetbake/builder/plan"
)

// initialReport is the release's report before it is built.
func (j *releaseJob) initialReport() ReleaseReport {
	rr := ReleaseReport{Name: j.release.Name, Outcome: Skipped, Tags: []string{}, Facts: j.release.Facts}
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
	for i, info := range j.baseInfo {
		rr.Bases[i].setContents(info)
	}
	if j.isApp() {
		rr.Kind = j.plan.Kind()
		rr.Bases = []Base{{Role: "app", Ref: j.release.Base, Resolved: j.runtimeBase, Digest: j.baseDigest}}
		rr.Bases[0].setContents(j.baseInfo[0])
	}
	rr.Annotations = maps.Clone(j.annotations)
	rr.Emulated, rr.BuildPlatform, rr.BuildPath = j.emulated, j.buildPlatform, string(j.path.Path)
	if j.path.Path == emulation.PathCross {
		rr.CrossBuildBase = j.crossBaseName()
	}
	rr.Findings = slices.Clone(j.lintFindings)
	rr.Binaries = slices.Clone(j.binaries)
	rr.Audit = slices.Clone(j.audit)
	if j.remembered != nil {
		v := *j.remembered
		rr.Remembered = &v
	}
	if j.routerSource != nil {
		src := *j.routerSource
		rr.RouterSource = &src
	}
	if rr.Digest != "" {
		rr.Repository = j.plan.Repository
	}
}

// addFinding records a finding of BuildKit's Dockerfile checks, once.
func (j *releaseJob) addFinding(f dockercheck.Finding) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !slices.Contains(j.lintFindings, f) {
		j.lintFindings = append(j.lintFindings, f)
	}
}

// resetFindings forgets the findings, base error, app check error and
// verdict key of an earlier attempt.
func (j *releaseJob) resetFindings() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lintFindings, j.baseErr, j.appErr = nil, nil, nil
	j.verdictKey, j.remembered = "", nil
}

// releasesOf lists the releases of jobs, in order.
func releasesOf(jobs []*releaseJob) []plan.Release {
	out := make([]plan.Release, len(jobs))
	for i, j := range jobs {
		out[i] = j.release
	}
	return out
}

// noCache says whether the release builds every step anew: its own
// no-cache (--set RELEASE.no-cache) when set, else the build's.
func (j *releaseJob) noCache() bool {
	if j.release.NoCache != nil {
		return *j.release.NoCache
	}
	return j.opts.controls.NoCache
}
