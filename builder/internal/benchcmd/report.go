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

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// Goals of the bench, against bake's default output mode, compared on the
// medians of the round-by-round ratios.
const (
	// coldGoal: never slower than bake, cold, on the whole build.
	coldGoal = 1.0
	// ownGoal is for the cold build without the router builds, the part
	// jetbake can make faster: both tools run the same router stage.
	ownGoal = 0.5
	// warmGoal is for the warm build, the whole of it.
	warmGoal = 0.3
	// memoryGoal is jetbake's peak resident memory at memoryGoalReleases.
	memoryGoal         = 200 << 20
	memoryGoalReleases = 50
	// crossGoal is for each tool's cold build on the cross path over its
	// cold build on the QEMU path (issue 42), not against bake.
	crossGoal = 0.3
)

// timings are one tool's measures on one matrix: one cold build per round
// (0 when it failed) and its phases (nil when it failed or they could not
// be read), the warm builds of each round, its peak memory, whether its
// digests stayed the same over every build, each cold build's digests, and
// its failures.
type timings struct {
	cold        []time.Duration
	coldPhases  []*progress.Timings
	coldDigests []map[string]string
	failures    []string
	warm        [][]time.Duration
	maxRSS      int64
	digests     map[string]string
	changed     bool
	releases    int
}

func (t *timings) addCold(r result) {
	t.cold = append(t.cold, r.wall)
	t.coldPhases = append(t.coldPhases, r.timings)
	t.coldDigests = append(t.coldDigests, r.digests)
	t.addRSS(r.maxRSS)
	t.checkDigests(r.digests)
}

// coldStable compares the digests of every cold build with the first
// one's, release by release: each round's cold build starts from a pruned
// cache, a cleared verdict store and an empty registry, so the same
// digests mean that the path builds the same images from scratch. It
// returns how many cold builds gave digests and the first difference, ""
// when there is none.
func (t *timings) coldStable() (builds int, diff string) {
	var first map[string]string
	for i, d := range t.coldDigests {
		if len(d) == 0 {
			continue
		}
		builds++
		if first == nil {
			first = d
			continue
		}
		for _, rel := range slices.Sorted(maps.Keys(first)) {
			if d[rel] != first[rel] && diff == "" {
				diff = fmt.Sprintf("release %s: %s in the first cold build, %s in round %d's", rel, first[rel], d[rel], i+1)
			}
		}
	}
	return builds, diff
}

// coldStableText is the report's cell for coldStable.
func (t *timings) coldStableText() string {
	builds, diff := t.coldStable()
	switch {
	case builds < 2:
		return fmt.Sprintf("- (%d cold build)", builds)
	case diff != "":
		return "no"
	}
	return fmt.Sprintf("yes (%d cold builds)", builds)
}

// failCold records a round whose cold build failed: neither it nor the
// round's warm builds count.
func (t *timings) failCold(what string) {
	t.cold, t.coldPhases, t.warm = append(t.cold, 0), append(t.coldPhases, nil), append(t.warm, nil)
	t.coldDigests = append(t.coldDigests, nil)
	t.fail(what)
}

func (t *timings) addRSS(rss int64) { t.maxRSS = max(t.maxRSS, rss) }

// fail records a failed build.
func (t *timings) fail(what string) { t.failures = append(t.failures, what) }

// coldOK is the cold builds that succeeded.
func (t *timings) coldOK() []time.Duration {
	return slices.DeleteFunc(slices.Clone(t.cold), func(d time.Duration) bool { return d == 0 })
}

// own is round i's cold build without its router builds: its wall time
// less the time in which a step of the router's Dockerfile stages ran
// (under QEMU, the same work for every tool), or 0 when the build failed
// or its phases are unknown.
func (t *timings) own(i int) time.Duration {
	if i >= len(t.cold) || i >= len(t.coldPhases) || t.cold[i] == 0 || t.coldPhases[i] == nil || len(t.coldPhases[i].Phases) == 0 {
		return 0
	}
	router, _ := t.coldPhases[i].Phase(progress.PhaseRouter)
	return max(t.cold[i]-time.Duration(router.WallSeconds*float64(time.Second)), time.Millisecond)
}

// ownOK is own of every round where it is known.
func (t *timings) ownOK() []time.Duration {
	var out []time.Duration
	for i := range t.cold {
		if d := t.own(i); d > 0 {
			out = append(out, d)
		}
	}
	return out
}

// phasesOK is the cold builds' phases that were read.
func (t *timings) phasesOK() []*progress.Timings {
	return slices.DeleteFunc(slices.Clone(t.coldPhases), func(p *progress.Timings) bool { return p == nil || len(p.Phases) == 0 })
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

// pathTitles name the build paths in the report.
var pathTitles = map[string]string{pathQEMU: "QEMU path", pathCross: "cross path"}

// label names a matrix built on a path: "shipped matrix, cross path".
func label(sz size, path string) string { return sz.String() + ", " + pathTitles[path] }

// printTable prints one matrix's columns on one build path, one per tool:
// medians with min-max, the cold build without the router builds, time per
// release, peak memory, reproducibility; then jetbake's ratios to each bake
// mode, round by round, and the cold builds' phases side by side.
func printTable(out io.Writer, sz size, path string, names []string, results map[string]*timings) sizeSummary {
	jb := results[toolJetbake]
	releases := max(jb.releases, 1)
	fmt.Fprintf(out, "\n==> %s: medians (min-max) over %d cold and %d warm builds per tool\n", label(sz, path), len(jb.cold), len(jb.allWarm()))
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
	row("cold s", func(t *timings) string { return medianSpread(t.coldOK()) })
	row("cold s without router builds", func(t *timings) string { return medianSpread(t.ownOK()) })
	row("warm s", func(t *timings) string { return medianSpread(t.allWarm()) })
	row("cold s/release", func(t *timings) string { return perRelease(t.coldOK(), releases) })
	row("warm s/release", func(t *timings) string { return perRelease(t.allWarm(), releases) })
	row("peak RSS of the CLI", func(t *timings) string { return mib(t.maxRSS) })
	row("same digests every build", func(t *timings) string {
		if t.digests == nil {
			return "-"
		}
		return yesNo(!t.changed)
	})
	row("same digests cold to cold", func(t *timings) string { return t.coldStableText() })
	row("failed builds", func(t *timings) string { return fmt.Sprint(len(t.failures)) })
	tw.Flush()
	sum := sizeSummary{size: sz, path: path, releases: releases, maxRSS: jb.maxRSS, ratios: map[string]peerRatios{}}
	for _, name := range names {
		for _, f := range results[name].failures {
			fmt.Fprintf(out, "%s failed: %s\n", toolTitles[name], f)
		}
	}
	for _, name := range names[1:] {
		r := pairedRatios(jb, results[name])
		if len(r.cold)+len(r.own)+len(r.warm) == 0 {
			fmt.Fprintf(out, "jetbake/%s: no ratio, no round where both built\n", name)
			continue
		}
		sum.ratios[name] = r.medians()
		fmt.Fprintf(out, "jetbake/%s round by round: cold %s (median %s), cold without router builds %s (median %s), warm %s (median %s)\n",
			name, ratios(r.cold), ratioText(medianOrNaN(r.cold)), ratios(r.own), ratioText(medianOrNaN(r.own)),
			ratios(r.warm), ratioText(medianOrNaN(r.warm)))
	}
	printPhases(out, names, results)
	return sum
}

// perRelease is the median of ds over releases, in seconds, or "-".
func perRelease(ds []time.Duration, releases int) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", median(ds).Seconds()/float64(releases))
}

// medianSpread is "median (min-max)" of ds in seconds, or "-".
func medianSpread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%s)", median(ds).Seconds(), spread(ds))
}

// printPhases prints the tools' cold builds phase by phase, the medians of
// the rounds' wall seconds: jetbake's from its report, bake's from its
// rawjson progress, by the same rules. Phases overlap, so they do not add
// up to the total.
func printPhases(out io.Writer, names []string, results map[string]*timings) {
	med := map[string]*progress.Timings{}
	for _, name := range names {
		if ps := results[name].phasesOK(); len(ps) > 0 {
			med[name] = medianTimings(ps)
		}
	}
	if len(med) == 0 {
		return
	}
	fmt.Fprintln(out, "cold builds phase by phase, wall s (medians of the rounds; phases overlap):")
	tw := tabwriter.NewWriter(indent(out, "    "), 0, 4, 2, ' ', tabwriter.AlignRight)
	line := func(label string, f func(t *progress.Timings) string) {
		fmt.Fprintf(tw, "%s\t", label)
		for _, name := range names {
			v := "-"
			if med[name] != nil {
				v = f(med[name])
			}
			fmt.Fprintf(tw, "%s\t", v)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "phase\t")
	for _, name := range names {
		fmt.Fprintf(tw, "%s\t", toolTitles[name])
	}
	fmt.Fprintln(tw)
	for _, p := range progress.Phases() {
		had := func(name string) bool {
			if med[name] == nil {
				return false
			}
			_, ok := med[name].Phase(p)
			return ok
		}
		if !slices.ContainsFunc(names, had) {
			continue
		}
		line(string(p), func(t *progress.Timings) string {
			if pt, ok := t.Phase(p); ok {
				return fmt.Sprintf("%.2f", pt.WallSeconds)
			}
			return "-"
		})
	}
	line("outside any step", func(t *progress.Timings) string { return fmt.Sprintf("%.2f", t.OutsideSeconds) })
	_ = tw.Flush()
}

// medianOrNaN is the median of xs, or NaN when there is none.
func medianOrNaN(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return median(xs)
}

// medianTimings is, phase by phase, the median of several builds' timings.
func medianTimings(ts []*progress.Timings) *progress.Timings {
	out := &progress.Timings{}
	var total, outside []float64
	byPhase := map[progress.Phase][]progress.PhaseTiming{}
	var order []progress.Phase
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
		out.Phases = append(out.Phases, progress.PhaseTiming{Name: name, WallSeconds: median(wall), BusySeconds: median(busy),
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
