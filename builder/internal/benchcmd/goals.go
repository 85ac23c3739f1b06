package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// roundRatios are jetbake's time over a peer's, round by round: the whole
// cold build, the cold build without the router builds (timings.own), and
// the medians of the warm builds. The tools of a round ran minutes apart
// at most, so these ratios suffer less from a machine whose speed drifts
// than ratios of medians pooled over rounds. A round where either tool
// failed the build (or its phases are unknown, for own) is left out.
type roundRatios struct {
	cold, own, warm []float64
}

func pairedRatios(a, b *timings) roundRatios {
	var r roundRatios
	for i := range min(len(a.cold), len(b.cold)) {
		if a.cold[i] > 0 && b.cold[i] > 0 {
			r.cold = append(r.cold, ratio(a.cold[i], b.cold[i]))
		}
		if ao, bo := a.own(i), b.own(i); ao > 0 && bo > 0 {
			r.own = append(r.own, ratio(ao, bo))
		}
		if i < len(a.warm) && i < len(b.warm) && len(a.warm[i]) > 0 && len(b.warm[i]) > 0 {
			r.warm = append(r.warm, ratio(median(a.warm[i]), median(b.warm[i])))
		}
	}
	return r
}

// peerRatios are the medians of a peer's roundRatios; NaN where no round
// had both tools' builds.
type peerRatios struct {
	cold, own, warm float64
}

func (r roundRatios) medians() peerRatios {
	return peerRatios{cold: medianOrNaN(r.cold), own: medianOrNaN(r.own), warm: medianOrNaN(r.warm)}
}

// sizeSummary is what the goals and the closing table need of one matrix.
type sizeSummary struct {
	size     size
	path     string
	releases int
	// ratios are jetbake's to each peer that was built, by its name.
	ratios map[string]peerRatios
	maxRSS int64
}

// printGoals compares every matrix with the goals against bake's default mode.
func printGoals(out io.Writer, sums []sizeSummary) {
	fmt.Fprintf(out, "\ngoals against bake's default output (medians of the round-by-round ratios):\n")
	for _, s := range sums {
		r, ok := s.ratios[toolBake]
		line := fmt.Sprintf("  %-48s cold <= %.1fx: %s; cold without router builds <= %.1fx: %s; warm <= %.1fx: %s",
			label(s.size, s.path)+":", coldGoal, goal(r.cold, coldGoal), ownGoal, goal(r.own, ownGoal), warmGoal, goal(r.warm, warmGoal))
		if !ok {
			line = fmt.Sprintf("  %-48s no ratio to bake's default output (not among -tools, or no round where both built)", label(s.size, s.path)+":")
		}
		if s.releases >= memoryGoalReleases {
			line += fmt.Sprintf("; memory < %s: %s (%s)", mib(memoryGoal), verdict(s.maxRSS < memoryGoal), mib(s.maxRSS))
		}
		fmt.Fprintln(out, line)
	}
}

// printCrossGoal compares every matrix with the cross path's goal: each
// tool's cold build on the cross path at most crossGoal of its cold build
// on the QEMU path, on the medians of the round-by-round ratios. The goal
// is jetbake's; bake's ratio on the same Dockerfile is stated beside it.
func printCrossGoal(out io.Writer, sums []pathSummary) {
	if len(sums) == 0 {
		return
	}
	fmt.Fprintf(out, "\ngoal of the cross path: cold on the cross path <= %.1fx cold on the QEMU path, each tool against itself (medians of the round-by-round ratios):\n", crossGoal)
	for _, s := range sums {
		var parts []string
		for _, name := range s.tools {
			parts = append(parts, toolTitles[name]+" "+goal(medianOrNaN(s.byTool[name].cold), crossGoal))
		}
		fmt.Fprintf(out, "  %-36s %s\n", s.size.String()+":", strings.Join(parts, "; "))
	}
}

// printRatioTable prints the ratios of every matrix to every peer, a
// Markdown table for docs/speed.md.
func printRatioTable(out io.Writer, sums []sizeSummary, peers []string) {
	if len(peers) == 0 {
		return
	}
	fmt.Fprintf(out, "\njetbake's time over each peer's (medians of the round-by-round ratios):\n\n")
	tw := tabwriter.NewWriter(out, 0, 4, 1, ' ', 0)
	head, rule := []string{"matrix"}, []string{"---"}
	for _, p := range peers {
		head = append(head, "vs "+toolTitles[p]+": cold", "cold without router builds", "warm")
		rule = append(rule, "---", "---", "---")
	}
	fmt.Fprintf(tw, "| %s |\n| %s |\n", strings.Join(head, "\t| "), strings.Join(rule, "\t| "))
	for _, s := range sums {
		cells := []string{label(s.size, s.path)}
		for _, p := range peers {
			r, ok := s.ratios[p]
			if !ok {
				r = peerRatios{cold: math.NaN(), own: math.NaN(), warm: math.NaN()}
			}
			cells = append(cells, ratioText(r.cold), ratioText(r.own), ratioText(r.warm))
		}
		fmt.Fprintf(tw, "| %s |\n", strings.Join(cells, "\t| "))
	}
	_ = tw.Flush()
}

// goal says whether ratio meets the goal: "met (0.80x)", "NOT met (1.10x)",
// or that no round had both tools' builds (NaN).
func goal(ratio, goal float64) string {
	if math.IsNaN(ratio) {
		return "not measured (no round where both tools built)"
	}
	return fmt.Sprintf("%s (%.2fx)", verdict(ratio <= goal), ratio)
}

// ratioText is "0.80x", or "-" for NaN.
func ratioText(r float64) string {
	if math.IsNaN(r) {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}

// brokenComparison says why the matrix's comparison compared nothing, one
// error per reason: a peer that failed the cold build of every round, or
// every warm build; a ratio that no round gave; phases that could not be
// read. The bench then exits non-zero, so that it cannot pass while it
// compares nothing. It says nothing of speed: a missed goal is no error.
// sz names the matrix and its path (label).
func brokenComparison(sz string, names []string, results map[string]*timings) []error {
	jb := results[toolJetbake]
	var errs []error
	if len(names) > 1 && len(jb.phasesOK()) == 0 {
		errs = append(errs, fmt.Errorf("%s: jetbake's phases were not in its --metadata-file report", sz))
	}
	for _, name := range names[1:] {
		t := results[name]
		title := toolTitles[name]
		why := ""
		if len(t.failures) > 0 {
			why = ": " + firstLine(errors.New(t.failures[0]))
		}
		r := pairedRatios(jb, t)
		switch {
		case len(t.coldOK()) == 0:
			errs = append(errs, fmt.Errorf("%s: %s failed every round%s", sz, title, why))
		case len(r.cold) == 0:
			errs = append(errs, fmt.Errorf("%s: no cold ratio of jetbake to %s: no round where both built", sz, title))
		case len(t.phasesOK()) == 0:
			errs = append(errs, fmt.Errorf("%s: %s's phases could not be read from its rawjson progress, so no ratio without the router builds", sz, title))
		case len(r.own) == 0:
			errs = append(errs, fmt.Errorf("%s: no ratio of jetbake to %s without the router builds: no round where both tools' phases were read", sz, title))
		case len(r.warm) == 0:
			errs = append(errs, fmt.Errorf("%s: no warm ratio of jetbake to %s: no round where both built warm%s", sz, title, why))
		}
	}
	return errs
}

// unstableDigests is an error when jetbake's cold builds of one matrix on
// one path gave different image digests: jetbake's images are reproducible
// on each path (issue 42), so a difference is a bug, not noise. bake's
// default output is not reproducible, and is only reported.
func unstableDigests(sz string, jb *timings) []error {
	if _, diff := jb.coldStable(); diff != "" {
		return []error{fmt.Errorf("%s: jetbake's cold builds gave different image digests: %s", sz, diff)}
	}
	return nil
}
