package imagebuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/buildkit/client"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/frontend/subrequests/lint"
	"github.com/moby/buildkit/solver/pb"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/plan"
)

// Severities of a Finding.
const (
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// Finding is one result of BuildKit's Dockerfile checks on the router's
// Dockerfile, for one release and SM target.
type Finding struct {
	// Release and SM say which build it was checked for.
	Release string `json:"release"`
	SM      string `json:"sm"`
	// Severity is SeverityWarning (a check rule) or SeverityError (the
	// Dockerfile cannot be built).
	Severity string `json:"severity"`
	// Rule is the check's name, e.g. "FromAsCasing"; empty for errors.
	Rule string `json:"rule,omitempty"`
	// Message is what BuildKit says.
	Message string `json:"message"`
	// File and Line are where, as BuildKit reports them; Line is 0 when unknown.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// URL documents the rule.
	URL string `json:"url,omitempty"`
}

// String writes the finding as "FILE:LINE: warning: RULE: MESSAGE (release R, SM S)",
// without the SM when the finding is not of one SM target.
func (f Finding) String() string {
	where := f.File
	if f.Line > 0 {
		where = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	what := f.Message
	if f.Rule != "" {
		what = f.Rule + ": " + f.Message
	}
	if f.SM == "" {
		return fmt.Sprintf("%s: %s: %s (release %s)", where, f.Severity, what, f.Release)
	}
	return fmt.Sprintf("%s: %s: %s (release %s, SM %s)", where, f.Severity, what, f.Release, f.SM)
}

// Check runs the Dockerfile frontend's own checks (the "frontend.lint"
// subrequest, as `docker build --check`) on the router's Dockerfile with the
// build args of every selected release and SM target, on the first node. It
// returns every finding; the error is for checks that could not run.
func (b *Builder) Check(ctx context.Context, p *plan.Plan) ([]Finding, error) {
	if len(b.nodes) == 0 {
		return nil, errors.New("no BuildKit node to check on")
	}
	jobs, err := b.selectJobs(p)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var out []Finding
	for _, j := range jobs {
		mounts, err := j.localMounts("")
		if err != nil {
			return nil, err
		}
		buildBase := arm64Manifest(ctx, j.buildBase, b.opts.remoteOpts)
		runtimeBase := arm64Manifest(ctx, j.runtimeBase, b.opts.remoteOpts)
		opt := client.SolveOpt{LocalMounts: mounts, Session: b.opts.sessionAttach}
		_, err = b.nodes[0].Client.Build(ctx, opt, "jetbake", func(ctx context.Context, c gateway.Client) (*gateway.Result, error) {
			found, err := j.check(ctx, c, buildBase, runtimeBase)
			mu.Lock()
			out = append(out, found...)
			mu.Unlock()
			return gateway.NewResult(), err
		}, nil)
		if err != nil {
			return out, fmt.Errorf("release %s: check %s: %w", j.release.Name, j.dockerfile, err)
		}
	}
	return out, nil
}

// check lints the router stage for every target of the release, and its
// runtime stage; the bases are the arm64 manifests of the release's.
func (j *releaseJob) check(ctx context.Context, c gateway.Client, buildBase, runtimeBase string) ([]Finding, error) {
	inputs, err := jetbakeContext(ctx, j.opts.epoch)
	if err != nil {
		return nil, err
	}
	// One lint per SM target of the router stage, and one of the runtime
	// stage (no SM) when the router names one.
	stages := slices.Clone(j.release.Targets)
	if j.plan.Router.RuntimeTarget != "" {
		stages = append(stages, plan.Target{})
	}
	found := make([][]Finding, len(stages))
	eg, ctx := errgroup.WithContext(ctx)
	for i, t := range stages {
		eg.Go(func() error {
			opts := j.routerOpts(t, buildBase)
			if t.SM == "" {
				opts = j.stageOpts(j.plan.Router.RuntimeTarget, j.runtimeArgs(buildBase, runtimeBase))
			}
			opts["requestid"] = lint.RequestLint
			// The checks judge the Dockerfile for the daemon's platform
			// (they ignore the "platform" option), so this rule would flag
			// every arm64 base on an amd64 daemon; jetbake always builds
			// linux/arm64 and resolves the bases for it.
			opts["build-arg:BUILDKIT_DOCKERFILE_CHECK"] = "skip=InvalidBaseImagePlatform"
			res, err := c.Solve(ctx, gateway.SolveRequest{Frontend: "dockerfile.v0", FrontendOpt: opts, FrontendInputs: inputs})
			if err != nil && t.SM == "" {
				return fmt.Errorf("stage %s: %w", j.plan.Router.RuntimeTarget, err)
			}
			if err != nil {
				return fmt.Errorf("SM %s: %w", t.SM, err)
			}
			var results lint.LintResults
			if err := json.Unmarshal(res.Metadata["result.json"], &results); err != nil {
				return fmt.Errorf("SM %s: the Dockerfile frontend's check result: %w", t.SM, err)
			}
			found[i] = j.findings(t, &results)
			return nil
		})
	}
	err = eg.Wait()
	var out []Finding
	for _, f := range found {
		out = append(out, f...)
	}
	return out, err
}

// findings turns BuildKit's lint results into findings with file and line.
func (j *releaseJob) findings(t plan.Target, r *lint.LintResults) []Finding {
	where := func(loc *pb.Location) (string, int) {
		file := filepath.Join(j.dockerfileDir, j.dockerfile)
		if loc == nil || loc.SourceIndex < 0 || int(loc.SourceIndex) >= len(r.Sources) {
			return file, 0
		}
		if name := r.Sources[loc.SourceIndex].Filename; name != "" && name != j.dockerfile {
			file = name
		}
		if len(loc.Ranges) == 0 || loc.Ranges[0].Start == nil {
			return file, 0
		}
		return file, int(loc.Ranges[0].Start.Line)
	}
	var out []Finding
	for _, w := range r.Warnings {
		file, line := where(w.Location)
		out = append(out, Finding{Release: j.release.Name, SM: t.SM, Severity: SeverityWarning, Rule: w.RuleName,
			Message: w.Detail, File: file, Line: line, URL: w.URL})
	}
	if r.Error != nil {
		file, line := where(&r.Error.Location)
		out = append(out, Finding{Release: j.release.Name, SM: t.SM, Severity: SeverityError, Message: r.Error.Message, File: file, Line: line})
	}
	return out
}

// frontendWarnings records the warnings of each release's session as its
// findings. They come from the Dockerfile frontend's checks when it builds
// the router stage itself (a "# syntax=" line); the converter inside
// jetbake reports its own through lintWarn, per SM target.
func frontendWarnings(jobs []*releaseJob) func(release string, w *client.VertexWarning) {
	byName := map[string]*releaseJob{}
	for _, j := range jobs {
		byName[j.release.Name] = j
	}
	return func(release string, w *client.VertexWarning) {
		j := byName[release]
		if j == nil {
			return
		}
		f := Finding{Release: release, Severity: SeverityWarning, Message: string(w.Short),
			File: filepath.Join(j.dockerfileDir, j.dockerfile), URL: w.URL}
		if len(w.Range) > 0 && w.Range[0] != nil {
			f.Line = int(w.Range[0].Start.Line)
		}
		j.addFinding(f)
	}
}

// HasErrors reports whether any finding is an error.
func HasErrors(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// arm64Manifest pins ref to its linux/arm64 image manifest when ref is an
// index, or returns ref unchanged when it cannot be looked up (the checks
// then report what BuildKit finds). The Dockerfile frontend's checks
// resolve base images for the daemon's own platform, not the "platform"
// option; an image manifest, unlike an index, resolves for any.
func arm64Manifest(ctx context.Context, ref string, opts []remote.Option) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		return ref
	}
	desc, err := remote.Get(r, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	if err != nil || !desc.MediaType.IsIndex() {
		return ref
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return ref
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return ref
	}
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == "arm64" {
			return r.Context().Name() + "@" + m.Digest.String()
		}
	}
	return ref
}
