package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// warmGoal is the target for a warm rebuild of the whole matrix.
const warmGoal = 2 * time.Second

// timings are one tool's build times: one cold build per round, and the
// warm builds of each round.
type timings struct {
	cold []time.Duration
	warm [][]time.Duration
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

// pairedRatios are jetbake/bake per round: the cold builds, and the medians
// of the warm builds. Both tools of a round ran minutes apart at most, so
// these ratios suffer less from a machine whose speed drifts than ratios
// of medians pooled over rounds.
func pairedRatios(jb, bk *timings) (cold, warm []float64) {
	for i := range min(len(jb.cold), len(bk.cold)) {
		cold = append(cold, ratio(jb.cold[i], bk.cold[i]))
		warm = append(warm, ratio(median(jb.warm[i]), median(bk.warm[i])))
	}
	return cold, warm
}

// printTable prints the medians, the ratios jetbake/bake and the goals.
func printTable(out io.Writer, results map[string]*timings) {
	jb, bk := results[toolJetbake], results[toolBake]
	jCold, jWarm := median(jb.cold), median(jb.allWarm())
	bCold, bWarm := median(bk.cold), median(bk.allWarm())
	fmt.Fprintf(out, "\n==> medians over %d cold and %d warm builds per tool\n", len(jb.cold), len(jb.allWarm()))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tcold s\twarm s\tcold min-max\twarm min-max\t")
	fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\t%s\t\n", toolJetbake, jCold.Seconds(), jWarm.Seconds(), spread(jb.cold), spread(jb.allWarm()))
	fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\t%s\t\n", "buildx bake", bCold.Seconds(), bWarm.Seconds(), spread(bk.cold), spread(bk.allWarm()))
	fmt.Fprintf(tw, "%s\t%.2fx\t%.2fx\t\t\t\n", "jetbake/bake", ratio(jCold, bCold), ratio(jWarm, bWarm))
	tw.Flush()
	coldR, warmR := pairedRatios(jb, bk)
	fmt.Fprintf(out, "jetbake/bake round by round: cold %s, warm %s; medians %.2fx and %.2fx\n",
		ratios(coldR), ratios(warmR), median(coldR), median(warmR))
	fmt.Fprintln(out, "\ngoals (comparisons on the round-by-round medians):")
	fmt.Fprintf(out, "  warm rebuild of the whole matrix under %s: %s (%.2fs)\n", warmGoal, verdict(jWarm < warmGoal), jWarm.Seconds())
	fmt.Fprintf(out, "  warm faster than bake:                 %s (%.2fx)\n", verdict(median(warmR) < 1), median(warmR))
	fmt.Fprintf(out, "  cold no slower than bake:              %s (%.2fx)\n", verdict(median(coldR) <= 1), median(coldR))
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
