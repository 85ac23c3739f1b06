package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/computecap"
)

// auditRouters reads the fat binaries of every router (see audit.go),
// judges each for its own SM, records the result and returns the
// annotation value that says it, or the sentence that fails the release.
func (j *releaseJob) auditRouters(ctx context.Context, c gateway.Client, routers []llb.State, imports []gateway.CacheOptionsEntry) (string, error) {
	code := make([]cudaCode, len(j.release.Targets))
	for i, t := range j.release.Targets {
		r, err := j.openRouter(ctx, c, routers[i], t, imports)
		if err != nil {
			return "", err
		}
		if code[i], err = readCUDACode(t.Path, roleRouter, r); err != nil && !isNotELF(err) {
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
	table := computecap.DefaultTable()
	var parts []string
	for i, t := range j.release.Targets {
		sm, err := computecap.Parse(t.SM)
		if err != nil {
			return "", err
		}
		a, err := auditSM(table, sm, code[i:i+1], auditRelease{name: j.release.Name, cuda: j.release.CUDA})
		if err != nil {
			return "", err
		}
		parts = append(parts, a.SM+"="+a.Verdict)
	}
	return strings.Join(parts, ","), nil
}

// auditLibraries reads the fat binaries of the libraries the routers'
// DT_NEEDED entries resolved to in the runtime image (bins, after the
// smoke run), once each, judges them for every target and records them.
func (j *releaseJob) auditLibraries(ctx context.Context, c gateway.Client, run *smokeRun, bins []Binary) error {
	var paths []string
	for _, b := range bins {
		for _, lib := range b.Resolved {
			if lib.Path != "" && !lib.FromHost && !slices.Contains(paths, lib.Path) {
				paths = append(paths, lib.Path)
			}
		}
	}
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
	var code []cudaCode
	for _, p := range paths {
		r, err := openFile(ctx, ref, p)
		if err != nil {
			return fmt.Errorf("audit: read %s in %s: %w", p, run.image.name, err)
		}
		lib, err := readCUDACode(p, roleLibrary, r)
		if err != nil && !isNotELF(err) {
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
func (j *releaseJob) recordAudit() ([]Audit, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	table := computecap.DefaultTable()
	rel := auditRelease{name: j.release.Name, cuda: j.release.CUDA}
	var out []Audit
	var firstErr error
	for i, t := range j.release.Targets {
		sm, err := computecap.Parse(t.SM)
		if err != nil {
			return nil, err
		}
		var files []cudaCode
		if i < len(j.routerCode) {
			files = append(files, j.routerCode[i])
		}
		a, err := auditSM(table, sm, append(files, j.libraryCode...), rel)
		out = append(out, a)
		if firstErr == nil {
			firstErr = err
		}
	}
	j.audit = out
	return out, firstErr
}

// isNotELF reports an error of a file that is not ELF (a script router):
// it holds no fat binary to judge.
func isNotELF(err error) bool { return errors.Is(err, fatbin.ErrNotELF) }
