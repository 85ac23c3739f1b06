package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jetbake/jetbake/builder/imagebuild"
)

// Goals of the bench, against bake's default output mode, compared on the
// medians of the round-by-round ratios.
const (
	coldGoal = 0.9
	warmGoal = 0.4
	// memoryGoal is jetbake's peak resident memory at memoryGoalReleases.
	memoryGoal         = 200 << 20
	memoryGoalReleases = 50
)

// timings are one tool's measures on one matrix: one cold build per round
// (0 when it failed), the warm builds of each round, its peak memory,
// whether its digests stayed the same over every build, and its failures.
type timings struct {
	cold       []time.Duration
	failures   []string
	warm       [][]time.Duration
	coldPhases []*imagebuild.Timings
	maxRSS     int64
	digests    map[string]string
	changed    bool
	releases   int
}

func (t *timings) addCold(r result) {
	t.cold = append(t.cold, r.wall)
	if r.timings != nil {
		t.coldPhases = append(t.coldPhases, r.timings)
	}
	t.addRSS(r.maxRSS)
	t.checkDigests(r.digests)
}

func (t *timings) addRSS(rss int64) { t.maxRSS = max(t.maxRSS, rss) }

// fail records a failed build.
func (t *timings) fail(what string) { t.failures = append(t.failures, what) }

// coldOK is the cold builds that succeeded.
func (t *timings) coldOK() []time.Duration {
	return slices.DeleteFunc(slices.Clone(t.cold), func(d time.Duration) bool { return d == 0 })
}

// checkDigests compares a build's digests with the first build's: cold
// builds of later rounds start from a pruned cache and an empty registry, so
// the same digests mean the tool's output is reproducible.
func (t *timings) checkDigests(d map[string]string) {
	if t.digests == nil {
		t.digests = d
		return
	}
	if !maps.Equal(t.digests, d) {
		t.changed = true
	}
}

// allWarm is every warm build of every round.
func (t *timings) allWarm() []time.Duration { return slices.Concat(t.warm...) }

// median is the middle value of xs, or the mean of the two middle values.
func median[T time.Duration | float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is "min-max" of ds in seconds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f-%.2f", slices.Min(ds).Seconds(), slices.Max(ds).Seconds())
}

// ratio is a/b, or 0 when b is 0.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

// pairedRatios are a/b per round: the cold builds, and the medians of the
// warm builds. The tools of a round ran minutes apart at most, so these
// ratios suffer less from a machine whose speed drifts than ratios of
// medians pooled over rounds.
// A round where either tool failed a build is left out.
func pairedRatios(a, b *timings) (cold, warm []float64) {
	for i := range min(len(a.cold), len(b.cold)) {
		if a.cold[i] > 0 && b.cold[i] > 0 {
			cold = append(cold, ratio(a.cold[i], b.cold[i]))
		}
		if i < len(a.warm) && i < len(b.warm) && len(a.warm[i]) > 0 && len(b.warm[i]) > 0 {
			warm = append(warm, ratio(median(a.warm[i]), median(b.warm[i])))
		}
	}
	return cold, warm
}

// sizeSummary is what the goals need of one matrix.
type sizeSummary struct {
	size               size
	releases           int
	coldRatio, warmRto float64 // jetbake/bake default, medians of the rounds
	maxRSS             int64
	bakeBuilt          bool // bake's default mode was among the tools
}

// printTable prints one matrix's three columns: medians with min-max, time
// per release, peak memory, reproducibility, and jetbake's ratios to both
// bake modes, round by round.
func printTable(out io.Writer, sz size, names []string, results map[string]*timings) sizeSummary {
	jb := results[toolJetbake]
	releases := max(jb.releases, 1)
	fmt.Fprintf(out, "\n==> %s: medians (min-max) over %d cold and %d warm builds per tool\n", sz, len(jb.cold), len(jb.allWarm()))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	row := func(label string, f func(t *timings) string) {
		fmt.Fprintf(tw, "%s\t", label)
		for _, name := range names {
			fmt.Fprintf(tw, "%s\t", f(results[name]))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "\t")
	for _, name := range names {
		fmt.Fprintf(tw, "%s\t", toolTitles[name])
	}
	fmt.Fprintln(tw)
	row("cold s", func(t *timings) string {
		return fmt.Sprintf("%.2f (%s)", median(t.coldOK()).Seconds(), spread(t.coldOK()))
	})
	row("warm s", func(t *timings) string {
		return fmt.Sprintf("%.2f (%s)", median(t.allWarm()).Seconds(), spread(t.allWarm()))
	})
	row("cold s/release", func(t *timings) string { return fmt.Sprintf("%.3f", median(t.coldOK()).Seconds()/float64(releases)) })
	row("warm s/release", func(t *timings) string {
		return fmt.Sprintf("%.3f", median(t.allWarm()).Seconds()/float64(releases))
	})
	row("peak RSS of the CLI", func(t *timings) string { return mib(t.maxRSS) })
	row("same digests every build", func(t *timings) string { return yesNo(!t.changed) })
	row("failed builds", func(t *timings) string { return fmt.Sprint(len(t.failures)) })
	sum := sizeSummary{size: sz, releases: releases, maxRSS: jb.maxRSS, coldRatio: math.NaN(), warmRto: math.NaN()}
	var lines []string
	for _, name := range names[1:] {
		coldR, warmR := pairedRatios(jb, results[name])
		if name == toolBake {
			sum.coldRatio, sum.warmRto, sum.bakeBuilt = medianOrNaN(coldR), medianOrNaN(warmR), true
		}
		lines = append(lines, fmt.Sprintf("jetbake/%s round by round: cold %s (median %.2fx), warm %s (median %.2fx)",
			name, ratios(coldR), median(coldR), ratios(warmR), median(warmR)))
	}
	tw.Flush()
	for _, name := range names {
		for _, f := range results[name].failures {
			fmt.Fprintf(out, "%s failed: %s\n", toolTitles[name], f)
		}
	}
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	if len(jb.coldPhases) > 0 {
		fmt.Fprintln(out, "jetbake's cold build, phase by phase (medians of the rounds):")
		_ = medianTimings(jb.coldPhases).WriteTable(indent(out, "    "))
	}
	return sum
}

// printGoals compares every matrix with the goals against bake's default mode.
func printGoals(out io.Writer, sums []sizeSummary) {
	fmt.Fprintf(out, "\ngoals against bake's default output (medians of the round-by-round ratios):\n")
	for _, s := range sums {
		line := fmt.Sprintf("  %-36s cold <= %.1fx: %s; warm <= %.1fx: %s", s.size.String()+":",
			coldGoal, goal(s.coldRatio, coldGoal), warmGoal, goal(s.warmRto, warmGoal))
		if !s.bakeBuilt {
			line = fmt.Sprintf("  %-36s bake's default mode was not built", s.size.String()+":")
		}
		if s.releases >= memoryGoalReleases {
			line += fmt.Sprintf("; memory < %s: %s (%s)", mib(memoryGoal), verdict(s.maxRSS < memoryGoal), mib(s.maxRSS))
		}
		fmt.Fprintln(out, line)
	}
}

// goal says whether ratio meets the goal: "met (0.80x)", "NOT met (1.10x)",
// or that no round had both tools' builds (NaN).
func goal(ratio, goal float64) string {
	if math.IsNaN(ratio) {
		return "not measured (no round where both tools built)"
	}
	return fmt.Sprintf("%s (%.2fx)", verdict(ratio <= goal), ratio)
}

// medianOrNaN is the median of xs, or NaN when there is none.
func medianOrNaN(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return median(xs)
}

// medianTimings is, phase by phase, the median of several builds' timings.
func medianTimings(ts []*imagebuild.Timings) *imagebuild.Timings {
	out := &imagebuild.Timings{}
	var total, outside []float64
	byPhase := map[imagebuild.Phase][]imagebuild.PhaseTiming{}
	var order []imagebuild.Phase
	for _, t := range ts {
		total, outside = append(total, t.TotalSeconds), append(outside, t.OutsideSeconds)
		for _, p := range t.Phases {
			if _, ok := byPhase[p.Name]; !ok {
				order = append(order, p.Name)
			}
			byPhase[p.Name] = append(byPhase[p.Name], p)
		}
	}
	for _, name := range order {
		ps := byPhase[name]
		var wall, busy, steps, cached []float64
		for _, p := range ps {
			wall, busy = append(wall, p.WallSeconds), append(busy, p.BusySeconds)
			steps, cached = append(steps, float64(p.Steps)), append(cached, float64(p.Cached))
		}
		out.Phases = append(out.Phases, imagebuild.PhaseTiming{Name: name, WallSeconds: median(wall), BusySeconds: median(busy),
			Steps: int(median(steps)), Cached: int(median(cached))})
	}
	out.TotalSeconds, out.OutsideSeconds = median(total), median(outside)
	return out
}

func mib(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// indent prefixes every line written to w.
func indent(w io.Writer, prefix string) io.Writer { return &indenter{w: w, prefix: prefix, bol: true} }

type indenter struct {
	w      io.Writer
	prefix string
	bol    bool
}

func (in *indenter) Write(p []byte) (int, error) {
	var buf []byte
	for _, c := range p {
		if in.bol {
			buf = append(buf, in.prefix...)
		}
		buf = append(buf, c)
		in.bol = c == '\n'
	}
	_, err := in.w.Write(buf)
	return len(p), err
}

func ratios(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%.2fx", f)
	}
	return strings.Join(parts, " ")
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
