package evidence

import (
	"slices"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// Audit is the build-time audit's result for one SM target of an image, as
// the evidence record carries it.
type Audit = evidencespec.Audit

// auditOfReport is a release's audit per SM from the build metadata
// (releases[].audit); nil when the build did not audit it.
func auditOfReport(rel *imagebuild.ReleaseReport) []Audit {
	var out []Audit
	for _, a := range rel.Audit {
		out = append(out, Audit{SM: a.SM, Verdict: a.Verdict, From: evidencespec.AuditFromMetadata})
	}
	return out
}

// auditOfAnnotation is an image's audit per SM from its io.jetbake.audit
// annotation (the routers' verdicts); nil when it has none, or one that is
// not what jetbake writes.
func auditOfAnnotation(v string) []Audit {
	entries, ok := matrix.ParseAudit(v)
	if !ok {
		return nil
	}
	out := make([]Audit, len(entries))
	for i, e := range entries {
		out[i] = Audit{SM: e.SM, Verdict: e.Verdict, From: evidencespec.AuditFromAnnotation}
	}
	return out
}

// validateAudit checks the audit's entries: an SM as the build writes it,
// once each, an audit verdict, and where it was read.
func (ev *Evidence) validateAudit() error {
	var seen []string
	for i, a := range ev.Audit {
		path := "audit[" + strconv.Itoa(i) + "]"
		c, err := computecap.Parse(a.SM)
		if err != nil || c.String() != a.SM || slices.Contains(seen, a.SM) {
			return schemaErr(path+".sm", a.SM, "is not an SM target such as 8.7, once each")
		}
		seen = append(seen, a.SM)
		if !slices.Contains(matrix.AuditVerdicts(), a.Verdict) {
			return schemaErr(path+".verdict", a.Verdict, "is not one of the audit's verdicts: "+strings.Join(matrix.AuditVerdicts(), ", "))
		}
		if !slices.Contains(evidencespec.AuditSources(), a.From) {
			return schemaErr(path+".from", a.From, "is not "+evidencespec.AuditFromMetadata+" or "+evidencespec.AuditFromAnnotation)
		}
	}
	return nil
}

// auditText says an audit per SM in one line, in the audit's words:
// "SM 8.7 runs, SM 11.0 partial (from build-metadata)"; "" for none.
func auditText(audits []Audit) string {
	if len(audits) == 0 {
		return ""
	}
	parts := make([]string, len(audits))
	var from []string
	for i, a := range audits {
		parts[i] = "SM " + a.SM + " " + a.Verdict
		if !slices.Contains(from, a.From) {
			from = append(from, a.From)
		}
	}
	return strings.Join(parts, ", ") + " (from " + strings.Join(from, ", ") + ")"
}
