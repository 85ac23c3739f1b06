// Package dockercheck is what jetbake makes of BuildKit's Dockerfile
// checks (the "frontend.lint" subrequest, `docker build --check`, and the
// warnings of a build): findings with release, SM target, file and line,
// and the linux/arm64 manifest of a base that the checks resolve for
// the daemon's own platform.
package dockercheck

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/frontend/subrequests/lint"
	"github.com/moby/buildkit/solver/pb"
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

// HasErrors reports whether any finding is an error.
func HasErrors(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// FromLint turns BuildKit's lint results of the release's Dockerfile
// (dockerfile in dir), checked for SM target sm ("" for none), into
// findings with file and line.
func FromLint(release, sm, dir, dockerfile string, r *lint.LintResults) []Finding {
	where := func(loc *pb.Location) (string, int) {
		file := filepath.Join(dir, dockerfile)
		if loc == nil || loc.SourceIndex < 0 || int(loc.SourceIndex) >= len(r.Sources) {
			return file, 0
		}
		if name := r.Sources[loc.SourceIndex].Filename; name != "" && name != dockerfile {
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
		out = append(out, Finding{Release: release, SM: sm, Severity: SeverityWarning, Rule: w.RuleName,
			Message: w.Detail, File: file, Line: line, URL: w.URL})
	}
	if r.Error != nil {
		file, line := where(&r.Error.Location)
		out = append(out, Finding{Release: release, SM: sm, Severity: SeverityError, Message: r.Error.Message, File: file, Line: line})
	}
	return out
}

// FromWarning is a warning of the Dockerfile frontend's progress, given
// while it builds the release's Dockerfile (file), as a finding.
func FromWarning(release, file string, w *client.VertexWarning) Finding {
	f := Finding{Release: release, Severity: SeverityWarning, Message: string(w.Short), File: file, URL: w.URL}
	if len(w.Range) > 0 && w.Range[0] != nil {
		f.Line = int(w.Range[0].Start.Line)
	}
	return f
}

// Arm64Manifest pins ref to its linux/arm64 image manifest when ref is an
// index, or returns ref unchanged when it cannot be looked up (the checks
// then report what BuildKit finds). The Dockerfile frontend's checks
// resolve base images for the daemon's own platform, not the "platform"
// option; an image manifest, unlike an index, resolves for any.
func Arm64Manifest(ctx context.Context, ref string, opts []remote.Option) string {
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
