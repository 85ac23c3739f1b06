package matrix

import (
	"slices"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// AuditEntry is one SM target's verdict in the io.jetbake.audit annotation
// (KeyAudit): "8.7=runs" is {SM: "8.7", Verdict: "runs"}.
type AuditEntry struct {
	SM      string
	Verdict string
}

// AuditVerdicts are the verdicts an audit per SM may say (io.jetbake.audit,
// the build metadata's releases[].audit, the evidence's audit): the audit's
// "runs", "JIT", "partial" and "no code" (computecap.Verdicts), and "none"
// when no file read for the SM holds a fat binary. The annotation, which
// says the routers' verdicts, never says "partial": a router jetbake
// compiled for an SM must hold code for it in every fat binary.
func AuditVerdicts() []string {
	var out []string
	for _, v := range computecap.Verdicts() {
		out = append(out, v.String())
	}
	return append(out, AuditNone)
}

// AuditNone is an SM's verdict in io.jetbake.audit when no file read for
// it holds a fat binary.
const AuditNone = "none"

// maxAudit bounds the annotation read: a few targets take tens of bytes.
const maxAudit = 1024

// ParseAudit reads the value of io.jetbake.audit, "8.7=runs,11.0=JIT", as
// the build writes it; ok is false when v is empty or not of that form
// (an SM that does not parse, an unknown verdict, an SM twice). Its
// readers (pick's preference, the evidence record) take such a value as
// no audit, never as a reason to refuse an image.
func ParseAudit(v string) (entries []AuditEntry, ok bool) {
	if v == "" || len(v) > maxAudit {
		return nil, false
	}
	for _, part := range strings.Split(v, ",") {
		sm, verdict, found := strings.Cut(part, "=")
		if !found || !canonicalSM(sm) || !slices.Contains(AuditVerdicts(), verdict) {
			return nil, false
		}
		if slices.ContainsFunc(entries, func(e AuditEntry) bool { return e.SM == sm }) {
			return nil, false
		}
		entries = append(entries, AuditEntry{SM: sm, Verdict: verdict})
	}
	return entries, true
}

// canonicalSM reports whether sm is a compute capability as the build
// writes it: "8.7", "11.0".
func canonicalSM(sm string) bool {
	c, err := computecap.Parse(sm)
	return err == nil && c.String() == sm
}
