package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// pathMeasures are one tool's cold builds of one matrix on both build
// paths: the router builds' wall time (the steps of the router's
// Dockerfile stages, under QEMU or cross-compiled), the whole builds, and
// the cross build's time over the QEMU build's, round by round (the paths
// of a round ran minutes apart at most).
type pathMeasures struct {
	routerQEMU, routerCross []time.Duration
	coldQEMU, coldCross     []time.Duration
	cold                    []float64
}

// pathSummary is what the cross goal and the closing table need of one matrix.
type pathSummary struct {
	size  size
	tools []string
	// byTool are the measures by tool.
	byTool map[string]pathMeasures
}

func measurePaths(qemu, cross *timings) pathMeasures {
	m := pathMeasures{routerQEMU: routerWalls(qemu), routerCross: routerWalls(cross), coldQEMU: qemu.coldOK(), coldCross: cross.coldOK()}
	for i := range min(len(qemu.cold), len(cross.cold)) {
		if qemu.cold[i] > 0 && cross.cold[i] > 0 {
			m.cold = append(m.cold, ratio(cross.cold[i], qemu.cold[i]))
		}
	}
	return m
}

// routerWalls are the router builds' wall times of t's cold builds whose
// phases were read.
func routerWalls(t *timings) []time.Duration {
	var out []time.Duration
	for _, p := range t.phasesOK() {
		if pt, ok := p.Phase(progress.PhaseRouter); ok {
			out = append(out, time.Duration(pt.WallSeconds*float64(time.Second)))
		}
	}
	return out
}

// routerRatio is the median router builds' time on the cross path over
// the QEMU path's, or NaN.
func (m pathMeasures) routerRatio() float64 {
	if len(m.routerQEMU) == 0 || len(m.routerCross) == 0 {
		return math.NaN()
	}
	return ratio(median(m.routerCross), median(m.routerQEMU))
}

// printPaths prints one matrix's cold builds on both paths, a column per
// tool: the router builds and the whole build under QEMU and cross-compiled,
// and the cross build's time over the QEMU build's. results are by path,
// then by tool.
func printPaths(out io.Writer, sz size, names []string, results map[string]map[string]*timings) pathSummary {
	sum := pathSummary{size: sz, tools: names, byTool: map[string]pathMeasures{}}
	for _, name := range names {
		sum.byTool[name] = measurePaths(results[pathQEMU][name], results[pathCross][name])
	}
	fmt.Fprintf(out, "\n==> %s: QEMU path against cross path, cold builds, medians (min-max), s\n", sz)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	row := func(label string, f func(m pathMeasures) string) {
		fmt.Fprintf(tw, "%s\t", label)
		for _, name := range names {
			fmt.Fprintf(tw, "%s\t", f(sum.byTool[name]))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "\t")
	for _, name := range names {
		fmt.Fprintf(tw, "%s\t", toolTitles[name])
	}
	fmt.Fprintln(tw)
	row("router builds, QEMU", func(m pathMeasures) string { return medianSpread(m.routerQEMU) })
	row("router builds, cross", func(m pathMeasures) string { return medianSpread(m.routerCross) })
	row("router builds cross/QEMU", func(m pathMeasures) string { return ratioText(m.routerRatio()) })
	row("cold, QEMU", func(m pathMeasures) string { return medianSpread(m.coldQEMU) })
	row("cold, cross", func(m pathMeasures) string { return medianSpread(m.coldCross) })
	row("cold cross/QEMU by round", func(m pathMeasures) string {
		if len(m.cold) == 0 {
			return "-"
		}
		return ratios(m.cold)
	})
	row("cold cross/QEMU (median)", func(m pathMeasures) string { return ratioText(medianOrNaN(m.cold)) })
	_ = tw.Flush()
	return sum
}

// printPathTable prints the paths' cold builds of every matrix and tool, a
// Markdown table for docs/speed.md: medians in seconds, and the medians of
// the round-by-round ratios.
func printPathTable(out io.Writer, sums []pathSummary) {
	if len(sums) == 0 {
		return
	}
	fmt.Fprintf(out, "\nQEMU path against cross path, cold builds (medians, s; ratios: medians of the round-by-round ratios):\n\n")
	tw := tabwriter.NewWriter(out, 0, 4, 1, ' ', 0)
	fmt.Fprintln(tw, "| matrix\t| tool\t| router builds: QEMU\t| router builds: cross\t| cold: QEMU\t| cold: cross\t| cold cross/QEMU |")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| --- |")
	for _, s := range sums {
		for _, name := range s.tools {
			m := s.byTool[name]
			fmt.Fprintf(tw, "| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t| %s |\n", s.size, toolTitles[name], medianText(m.routerQEMU),
				medianText(m.routerCross), medianText(m.coldQEMU), medianText(m.coldCross), ratioText(medianOrNaN(m.cold)))
		}
	}
	_ = tw.Flush()
}

// medianText is the median of ds in seconds, or "-".
func medianText(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", median(ds).Seconds())
}
