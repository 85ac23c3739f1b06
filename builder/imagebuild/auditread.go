package imagebuild

import (
	"context"
	"fmt"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/gatewayfile"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/computecap"
)

// auditRouters reads the fat binaries of every router (opened by
// openRouters; see package buildaudit),
// judges each for its own SM, records the result and returns the
// annotation value that says it, or the sentence that fails the release.
func (j *releaseJob) auditRouters(routers []*gatewayfile.Reader) (string, error) {
	code := make([]buildaudit.Code, len(j.release.Targets))
	for i, t := range j.release.Targets {
		var err error
		if code[i], err = buildaudit.Read(t.Path, buildaudit.RoleRouter, routers[i]); err != nil && !buildaudit.IsNotELF(err) {
			return "", fmt.Errorf("audit: %w", err)
		}
	}
	j.mu.Lock()
	j.routerCode = code
	j.mu.Unlock()
	if _, err := j.recordAudit(); err != nil {
		return "", err
	}
	// The annotation says the routers' verdicts only, which the build
	// knows before the export whenever the smoke run ends: the image's
	// bytes never depend on which finished first.
	return j.auditRelease().Annotation(j.facts(), code)
}

// auditLibraries reads the fat binaries of the libraries the routers'
// DT_NEEDED entries resolved to in the runtime image (bins, after the
// smoke run), once each, judges them for every target and records them.
func (j *releaseJob) auditLibraries(ctx context.Context, c gateway.Client, run *smokeRun, bins []smoke.Binary) error {
	paths := smoke.Libraries(bins)
	if len(paths) == 0 {
		return nil
	}
	def, err := run.image.state.Marshal(ctx, llb.Platform(arm64Platform()))
	if err != nil {
		return err
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), CacheImports: run.imports})
	if err != nil {
		return err
	}
	ref, err := res.SingleRef()
	if err != nil {
		return err
	}
	var code []buildaudit.Code
	for _, p := range paths {
		r, err := gatewayfile.Open(ctx, ref, p)
		if err != nil {
			return fmt.Errorf("audit: read %s in %s: %w", p, run.image.name, err)
		}
		lib, err := buildaudit.Read(p, buildaudit.RoleLibrary, r)
		if err != nil && !buildaudit.IsNotELF(err) {
			return fmt.Errorf("audit: %w", err)
		}
		code = append(code, lib)
	}
	j.mu.Lock()
	j.libraryCode = code
	j.mu.Unlock()
	_, err = j.recordAudit()
	return err
}

// recordAudit judges what was read so far for every target, records it
// for the report, and returns it with the first refusal.
func (j *releaseJob) recordAudit() ([]buildaudit.Audit, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out, err := j.auditRelease().Judge(j.facts(), j.routerCode, j.libraryCode)
	if out == nil && err != nil {
		return nil, err
	}
	j.audit = out
	return out, err
}

// auditRelease is the release as package buildaudit takes it.
func (j *releaseJob) auditRelease() buildaudit.Release {
	r := buildaudit.Release{Name: j.release.Name, CUDA: j.release.CUDA}
	for _, t := range j.release.Targets {
		r.SMs = append(r.SMs, t.SM)
	}
	return r
}

// facts is the table of Jetson facts the release's audit judges with: the
// shipped one, with the rows the matrix declared when the release rests on
// them.
func (j *releaseJob) facts() *computecap.Table {
	t := computecap.DefaultTable()
	if d := j.release.DeclaredFacts; d != nil {
		t, _ = t.Declare(*d)
	}
	return t
}
