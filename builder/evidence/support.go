package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/refs"
)

// SupportTable is every release's claimed tier, hardware and evidence.
type SupportTable struct {
	// Kind is "app" for an app's matrix, whose supported releases need
	// evidence of LevelApp; empty for a router's.
	Kind string `json:"kind,omitempty"`
	// MaxAge is the age limit evidence was judged by, such as "30d".
	MaxAge string `json:"max_age"`
	// Releases are the matrix's releases, in matrix order.
	Releases []SupportRow `json:"releases"`
}

// SupportRow is one release.
type SupportRow struct {
	// Release is the release's name.
	Release string `json:"release"`
	// JetPack and L4T are its versions.
	JetPack string `json:"jetpack"`
	L4T     string `json:"l4t"`
	// Tier is the tier it claims.
	Tier string `json:"tier"`
	// Facts is matrix.FactsDeclared when the release rests on facts the
	// matrix declares, not on jetbake's table: only evidence from a real
	// Jetson backs a tier above candidate then.
	Facts string `json:"facts,omitempty"`
	// FactsNote names the declared rows it rests on.
	FactsNote string `json:"facts_note,omitempty"`
	// Hardware are the modules it is for.
	Hardware []string `json:"hardware"`
	// CurrentDigest is the digest of its current image, when known.
	CurrentDigest string `json:"current_digest,omitempty"`
	// Backed is set when the current digest is known: true when some
	// evidence counts for it.
	Backed *bool `json:"backed,omitempty"`
	// LookupError says why the current digest could not be looked up
	// (the tag points at another image; a registry out of reach stops the
	// command instead); empty when it is known or simply not built.
	LookupError string `json:"lookup_error,omitempty"`
	// Evidence is the stored evidence, newest first; empty for "no evidence".
	Evidence []SupportEvidence `json:"evidence"`
	// Why says in one line why the release cannot be "supported" yet
	// whatever its evidence from other GPUs (computecap.UnprovenFor), or "".
	Why string `json:"why,omitempty"`
}

// SupportEvidence is one stored piece of evidence.
type SupportEvidence struct {
	// DeviceClass is the module it ran on.
	DeviceClass string `json:"device_class"`
	// Date is when the probe ran, in RFC 3339 form.
	Date string `json:"date"`
	// Digest is the image's digest.
	Digest string `json:"digest"`
	// Revision is the jetbake revision of the image.
	Revision string `json:"revision,omitempty"`
	// Level is the level the evidence reached (LevelOf): smoke,
	// cuda-kernel, serve or, for an app, app; "supported" needs serve, or
	// app for an app.
	Level Level `json:"level"`
	// Counts is set when the current digest is known: true when this
	// evidence counts for the current image within the age limit.
	Counts *bool `json:"counts,omitempty"`
	// File is the stored file's name in its release's folder.
	File string `json:"file"`
	// Audit is the image's build-time audit per SM target, as the evidence
	// records it: "runs", "JIT", "partial", "no code" or "none".
	Audit []Audit `json:"audit,omitempty"`
}

// registryFault reports whether err is a registry's refusal or failure (a
// name that does not resolve, no answer, a refused login): the command
// stops with its one sentence rather than print it under every release.
func registryFault(err error) bool {
	var re *refs.RegistryError
	return errors.As(err, &re)
}

// Support builds the table from the matrix, the store and, with
// WithResolver, each release's current image.
func Support(ctx context.Context, m *matrix.Matrix, opts ...Option) (*SupportTable, error) {
	o := newOptions(m, opts)
	t := &SupportTable{MaxAge: FormatAge(o.maxAge), Releases: []SupportRow{}}
	if m.Kind() == matrix.KindApp {
		t.Kind = matrix.KindApp
	}
	for i := range m.Releases {
		rel := &m.Releases[i]
		b, err := backingOf(ctx, &o, m, rel)
		if err != nil {
			return nil, err
		}
		if registryFault(b.currentErr) {
			return nil, b.currentErr // the next release's lookup would meet the same
		}
		row := SupportRow{Release: rel.Name, JetPack: rel.JetPack, L4T: rel.L4T, Tier: rel.Tier,
			Hardware: rel.Hardware, Evidence: []SupportEvidence{}}
		if note := m.FactsNote(rel); note != "" {
			row.Facts, row.FactsNote = matrix.FactsDeclared, note
		}
		if u, ok := unprovenFor(m, rel); ok && !b.provenOn(m, rel) {
			row.Why = u.Why
		}
		switch {
		case b.currentErr == nil:
			row.CurrentDigest = b.current.Digest
			row.Backed = ptr(b.backed())
		case !errors.Is(b.currentErr, ErrNotFound):
			row.LookupError = b.currentErr.Error()
		}
		for k, e := range b.entries {
			se := SupportEvidence{DeviceClass: e.Evidence.Host.DeviceClass, Date: e.Evidence.GeneratedAt,
				Digest: e.Evidence.Image.Digest, Revision: e.Evidence.Revision, Level: LevelOf(e.Evidence), File: filepath.Base(e.Path),
				Audit: e.Evidence.Audit}
			if b.currentErr == nil {
				se.Counts = ptr(b.verdicts[k] == nil)
			}
			row.Evidence = append(row.Evidence, se)
		}
		t.Releases = append(t.Releases, row)
	}
	return t, nil
}

// ptr returns a pointer to v.
func ptr(v bool) *bool { return &v }

// WriteJSON writes the table as indented JSON.
func (t *SupportTable) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return fmt.Errorf("write support table: %w", err)
	}
	return nil
}

// WriteMarkdown writes the table for a README or an issue.
func (t *SupportTable) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| Release | JetPack (L4T) | Tier | Hardware | Evidence |\n|---|---|---|---|---|\n")
	for _, r := range t.Releases {
		fmt.Fprintf(&b, "| %s | %s (%s) | %s | %s | %s |\n", cell(r.Release), cell(r.JetPack), cell(r.L4T),
			tierText(&r), cell(strings.Join(r.Hardware, ", ")), evidenceCell(&r))
	}
	// One line per reason, naming its releases.
	var whys []string
	byWhy := map[string][]string{}
	for _, r := range t.Releases {
		if r.Why != "" {
			if byWhy[r.Why] == nil {
				whys = append(whys, r.Why)
			}
			byWhy[r.Why] = append(byWhy[r.Why], r.Release)
		}
	}
	for _, why := range whys {
		fmt.Fprintf(&b, "\nNot supported yet (%s): %s.\n", strings.Join(byWhy[why], ", "), why)
	}
	level, what := SupportedLevel, "a CUDA kernel ran and the router served embeddings"
	if t.Kind == matrix.KindApp {
		level, what = LevelApp, "a CUDA kernel ran and the app check passed: torch found CUDA and the Jetson's GPU, and a CUDA matrix product was finite"
	}
	fmt.Fprintf(&b, "\nEvidence counts for a release's current image when it passed every check no more than %s ago; "+
		"for a supported release it must reach level %s (%s).\n", t.MaxAge, level, what)
	_, err := io.WriteString(w, b.String())
	return err
}

// tierText is the tier, marked when the release rests on declared facts
// and when a supported tier is not backed.
func tierText(r *SupportRow) string {
	var marks []string
	if r.Facts != "" {
		marks = append(marks, r.Facts+" facts")
	}
	if r.Tier == TierSupported && r.Backed != nil && !*r.Backed {
		marks = append(marks, "not backed by evidence")
	}
	if len(marks) == 0 {
		return r.Tier
	}
	return r.Tier + " (" + strings.Join(marks, ", ") + ")"
}

// evidenceCell lists a release's evidence in one Markdown cell.
func evidenceCell(r *SupportRow) string {
	if len(r.Evidence) == 0 {
		return "no evidence"
	}
	lines := make([]string, len(r.Evidence))
	for i, e := range r.Evidence {
		lines[i] = evidenceLine(&e, "`")
	}
	return strings.Join(lines, "<br>")
}

// evidenceLine writes "Jetson AGX Orin, 2026-11-20, sha256:c2efadaaded6,
// rev 677e5d8, level serve, audit SM 8.7 runs (from build-metadata)
// (counts)", with q around the digest and revision.
func evidenceLine(e *SupportEvidence, q string) string {
	date := e.Date
	if len(date) >= 10 {
		date = date[:10]
	}
	s := cell(e.DeviceClass) + ", " + date + ", " + q + shortDigest(e.Digest) + q
	if e.Revision != "" {
		rev := e.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += ", rev " + q + rev + q
	}
	if e.Level != "" {
		s += ", level " + string(e.Level)
	}
	if a := auditText(e.Audit); a != "" {
		s += ", audit " + cell(a)
	}
	if e.Counts != nil {
		if *e.Counts {
			s += " (counts)"
		} else {
			s += " (does not count)"
		}
	}
	return s
}

// WriteText writes the table for a terminal: one line per release, then
// one indented line per piece of evidence, or "no evidence".
func (t *SupportTable) WriteText(w io.Writer) error {
	nameW, tierW := 0, 0
	for _, r := range t.Releases {
		nameW, tierW = max(nameW, len(r.Release)), max(tierW, len(tierText(&r)))
	}
	var b strings.Builder
	for _, r := range t.Releases {
		fmt.Fprintf(&b, "%-*s  %-*s  JetPack %s (L4T %s): %s\n", nameW, r.Release, tierW, tierText(&r),
			r.JetPack, r.L4T, strings.Join(r.Hardware, ", "))
		if r.FactsNote != "" {
			b.WriteString("    " + r.FactsNote + ": supported needs evidence from a real Jetson\n")
		}
		if r.Why != "" {
			b.WriteString("    why not supported: " + r.Why + "\n")
		}
		if r.LookupError != "" {
			b.WriteString("    current digest unknown: " + r.LookupError + "\n")
		}
		if len(r.Evidence) == 0 {
			b.WriteString("    no evidence\n")
		}
		for _, e := range r.Evidence {
			b.WriteString("    " + evidenceLine(&e, "") + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
