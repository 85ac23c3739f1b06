package imagepick

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
)

// describeHost names the host for sentences: "a Jetson Orin, SM 8.7 with
// L4T R36.3.0 (JetPack 6.0)", "a host with no NVIDIA GPU visible".
func describeHost(f hostfit.Host) string {
	var s string
	switch {
	case f.GPU.IsZero():
		s = "a host with no NVIDIA GPU visible"
	default:
		s = "a " + computecap.Describe(f.GPU)
	}
	if f.L4T.Major != 0 {
		s += " with L4T R" + f.L4T.String()
		if f.JetPack != "" {
			s += " (JetPack " + f.JetPack + ")"
		}
	} else {
		s += " and no L4T release"
	}
	return s
}

// defaultNotJetsonFix is the fix of a host that is not a Jetson, unless
// WithNotJetsonFix words it for a command.
const defaultNotJetsonFix = "run it on the Jetson itself, or give WithSysroot the board's root file system"

// notJetsonSentence is the one sentence of a pick on a host that is not a
// Jetson: "this machine is not a Jetson: neither its device tree nor
// /sys/devices/soc0 names a Jetson SoC, so no image of REPO runs on it;
// fix: ...". fix words the fix for the command (default
// defaultNotJetsonFix).
func notJetsonSentence(repository, sysroot string, f hostfit.Host, fix string) string {
	if fix == "" {
		fix = defaultNotJetsonFix
	}
	who := "this machine"
	if filepath.Clean(sysroot) != "/" {
		who = "the host under " + sysroot
	}
	if f.SoC == "" {
		gpu := ""
		if !f.GPU.IsZero() {
			gpu = " (its GPU has SM " + f.GPU.String() + ")"
		}
		return fmt.Sprintf("%s is not a Jetson%s: neither its device tree nor /sys/devices/soc0 names a Jetson SoC, so no image of %s runs on it; fix: %s",
			who, gpu, repository, fix)
	}
	return fmt.Sprintf("%s has a Jetson %s SoC (%s) but no L4T release (no /etc/nv_tegra_release, which JetPack installs), so no image of %s can be matched to its JetPack; fix: %s",
		who, f.Family, f.SoC, repository, fix)
}

// noFitSentence is the one sentence of a failed pick: what the host is and
// what it would need, for the image closest to running.
func noFitSentence(repository string, f hostfit.Host, cands []Candidate) string {
	var judged, gpuFits []Candidate
	for _, c := range cands {
		if len(c.Meta.Targets) == 0 {
			continue
		}
		judged = append(judged, c)
		if _, err := computecap.Pick(f.GPU, c.Meta.image.Targets); err == nil && !f.GPU.IsZero() {
			gpuFits = append(gpuFits, c)
		}
	}
	who := describeHost(f)
	switch {
	case len(judged) == 0:
		reason := "no tags"
		if len(cands) > 0 {
			reason = cands[0].Tag + ": " + cands[0].Verdict.Reason
		}
		return fmt.Sprintf("no tag of %s is a jetbake image for linux/arm64 (%s)", repository, reason)
	case len(gpuFits) == 0 && f.GPU.IsZero():
		return fmt.Sprintf("no image of %s runs on %s: the host would need a Jetson %s with its GPU visible to containers (the NVIDIA container runtime)",
			repository, who, gpuUnion(judged))
	case len(gpuFits) == 0:
		return fmt.Sprintf("no image of %s runs on %s: the host would need a Jetson %s, the GPUs its images hold binaries for",
			repository, who, gpuUnion(judged))
	}
	// The closest image: the host's L4T major first, then the oldest release.
	closest := slices.MinFunc(gpuFits, func(a, b Candidate) int {
		am, bm := a.Meta.image.L4T.Major == f.L4T.Major, b.Meta.image.L4T.Major == f.L4T.Major
		if am != bm {
			return boolFirst(am)
		}
		return cmp.Or(compareL4T(a.Meta.image.L4T, b.Meta.image.L4T), compareCUDA(a.Meta.image.CUDA, b.Meta.image.CUDA))
	})
	return fmt.Sprintf("no image of %s runs on %s: the host would need %s, for %s",
		repository, who, closest.Verdict.Needs, closest.Reference)
}

// gpuUnion names the Jetsons any image is for: "Orin (SM 8.7) or Thor (SM 11.0)".
func gpuUnion(cands []Candidate) string {
	var caps []computecap.Capability
	for _, c := range cands {
		for _, t := range c.Meta.image.Targets {
			if !slices.ContainsFunc(caps, func(x computecap.Capability) bool { return x.Canonical() == t.Canonical() }) {
				caps = append(caps, t)
			}
		}
	}
	slices.SortFunc(caps, func(a, b computecap.Capability) int { return a.Compare(b) })
	names := make([]string, len(caps))
	for i, c := range caps {
		if soc, ok := computecap.SoCByCapability(c); ok {
			names[i] = soc.Family + " (SM " + c.String() + ")"
		} else {
			names[i] = "GPU with SM " + c.String()
		}
	}
	return strings.Join(names, " or ")
}

// WriteText writes the chosen reference on one line: what
// `docker run --runtime nvidia $(jetbake pick REPO)` takes. It writes only
// a reference that name.ParseReference accepts, so that a registry's text
// never reaches a shell.
func (r *Result) WriteText(w io.Writer) error {
	if r.Best == nil {
		return nil
	}
	if _, err := name.ParseReference(r.Best.Reference, name.StrictValidation); err != nil {
		return fmt.Errorf("the chosen image's reference %s is not a valid reference: %w", computecap.QuoteShort(r.Best.Reference), err)
	}
	_, err := fmt.Fprintln(w, r.Best.Reference)
	return err
}

// WriteExplain writes the host and every candidate with why it was taken
// or refused. Every text a registry chose (tags, annotations, reasons built
// from them) is printed with its control characters escaped: a tag or an
// annotation must not retitle or clear the terminal.
func (r *Result) WriteExplain(w io.Writer) error {
	p := refs.Printable
	fmt.Fprintf(w, "host: %s\n", describeHost(r.Host))
	if !r.Host.DriverCUDA.IsZero() {
		fmt.Fprintf(w, "driver CUDA: %s (from %s)\n", r.Host.DriverCUDA, r.Host.DriverCUDAFrom)
	}
	audited := slices.ContainsFunc(r.Candidates, func(c Candidate) bool { return c.Verdict.OK && c.AuditCovers })
	for _, c := range r.Candidates {
		mark := "refused"
		switch {
		case c.Chosen:
			mark = "chosen "
		case c.Verdict.OK:
			mark = "fits   "
		}
		fmt.Fprintf(w, "%s %s\n", mark, p(c.Reference))
		if len(c.Tags) > 1 {
			fmt.Fprintf(w, "        tags: %s\n", p(strings.Join(c.Tags, ", ")))
		}
		if c.Meta.JetPack != "" {
			fmt.Fprintf(w, "        JetPack %s, L4T %s, CUDA %s, SM %s, tier %s\n",
				p(c.Meta.JetPack), p(c.Meta.L4T), p(c.Meta.CUDA), p(strings.Join(c.Meta.Targets, ",")), p(c.Meta.Tier))
		}
		why := c.Verdict.Reason
		if c.ExactJetPack {
			why += "; the host's exact JetPack release"
		}
		fmt.Fprintf(w, "        %s\n", p(why))
		if c.Verdict.OK {
			// Fixed phrases, parsed SMs and the audit's verdict words
			// only (parseAudit keeps nothing else): no registry text.
			fmt.Fprintf(w, "        audit: %s\n", auditNote(c, r.Host.GPU, audited))
		}
	}
	if r.SkippedTags > 0 {
		fmt.Fprintf(w, "left out %d listed tags that are not valid tags\n", r.SkippedTags)
	}
	if r.Sentence != "" {
		fmt.Fprintf(w, "%s\n", p(r.Sentence))
	}
	return nil
}

// auditNote says in one line how the image's build-time audit
// (io.jetbake.audit) weighed in its rank on a host with gpu: preferred when
// it covers the router picked for gpu; otherwise why not, ranked below the
// audited images when some image that fits is (audited).
func auditNote(c Candidate, gpu computecap.Capability, audited bool) string {
	picked, verdict, ok := c.Meta.auditFor(gpu)
	router := "the router for SM " + picked.String()
	if c.AuditCovers {
		how := "code that runs there"
		if verdict == computecap.JIT.String() {
			how = "PTX compiled for it when loaded (JIT)"
		}
		return "preferred: its build-time audit found " + how + " in " + router + ", the one picked for SM " + gpu.String()
	}
	var why string
	switch {
	case picked.IsZero():
		why = "no router of the image serves SM " + gpu.String()
	case c.Meta.Audit == nil:
		why = "the image has no build-time audit (no valid io.jetbake.audit: built before jetbake audited images, or not by jetbake build)"
	case !ok:
		why = "its build-time audit does not name " + router + ", the one picked for SM " + gpu.String()
	case verdict == computecap.Partial.String():
		why = "its build-time audit found code for SM " + gpu.String() + " in only some fat binaries of " + router +
			" (io.jetbake.audit says \"partial\": the others hold only other GPUs' kernels, which fail if launched)"
	default:
		why = "its build-time audit found no code for SM " + gpu.String() + " in " + router + " (io.jetbake.audit says \"" + verdict + "\")"
	}
	if audited {
		return "ranked below the images whose audit covers SM " + gpu.String() + ": " + why
	}
	return why + "; no image that fits has an audit that covers SM " + gpu.String() + ", so it ranks as the others"
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
