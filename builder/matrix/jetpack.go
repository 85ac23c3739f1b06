package matrix

import (
	"slices"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// The JetPack facts (L4T, CUDA, which SMs its modules have) live in one
// place, the table of package computecap; this file only looks them up.

// JetPackTargets returns the SMs of the Jetson modules a JetPack version
// runs on: JetPack 5 has Xavier (7.2) and Orin (8.7), JetPack 6 Orin, JetPack
// 7.0 and 7.1 Thor (11.0), JetPack 7.2 Orin and Thor. A patch release such
// as "5.1.3" is looked up as its series ("5.1"); a version of a known L4T
// series that the table lacks (such as "5.0.2") gets the SMs of that series.
// Unknown versions return false.
func JetPackTargets(jetpack string) ([]computecap.Capability, bool) {
	t := computecap.DefaultTable()
	return jetPackTargets(t, t.Releases(), jetpack)
}

// jetPackTargets is JetPackTargets on the given table and its rows.
func jetPackTargets(t *computecap.Table, rows []computecap.JetPackRelease, jetpack string) ([]computecap.Capability, bool) {
	for _, r := range rows {
		if r.JetPack == jetpack {
			return r.Capabilities, true
		}
	}
	for _, r := range rows {
		if strings.HasPrefix(jetpack, r.JetPack+".") {
			return r.Capabilities, true
		}
	}
	major, ok := t.L4TMajorForJetPack(jetpack)
	if !ok {
		return nil, false
	}
	var caps []computecap.Capability
	for _, r := range rows {
		if m, _ := t.L4TMajorForJetPack(r.JetPack); m == major {
			for _, c := range r.Capabilities {
				if !slices.Contains(caps, c) {
					caps = append(caps, c)
				}
			}
		}
	}
	return caps, len(caps) > 0
}

// knownJetPacks lists the JetPack versions of the table, for fixes.
func knownJetPacks(rows []computecap.JetPackRelease) string {
	var names []string
	for _, r := range rows {
		names = append(names, r.JetPack)
	}
	return strings.Join(names, ", ")
}

// jetPacksWith lists the JetPack versions whose modules include SM c.
func jetPacksWith(rows []computecap.JetPackRelease, c computecap.Capability) []string {
	var names []string
	for _, r := range rows {
		if hasSM(r.Capabilities, c) {
			names = append(names, r.JetPack)
		}
	}
	return names
}

// hasSM reports whether caps holds the GPU of c (Thor's 10.1 and 11.0 are one GPU).
func hasSM(caps []computecap.Capability, c computecap.Capability) bool {
	c = c.Canonical()
	for _, x := range caps {
		x = x.Canonical()
		if x.Major == c.Major && x.Minor == c.Minor {
			return true
		}
	}
	return false
}

// describeModules names the modules of a list of SMs: "Jetson Orin (SM 8.7)
// and Jetson Thor (SM 11.0)".
func describeModules(t *computecap.Table, caps []computecap.Capability) string {
	parts := make([]string, len(caps))
	for i, c := range caps {
		name := "SM " + c.String()
		if soc, ok := t.SoCByCapability(c); ok {
			name = "Jetson " + soc.Family + " (SM " + c.String() + ")"
		}
		parts[i] = name
	}
	return strings.Join(parts, " and ")
}

// l4tMajor reads the major version of an L4T version "36.4.3".
func l4tMajor(l4t string) (int, bool) {
	head, _, _ := strings.Cut(l4t, ".")
	n, err := strconv.Atoi(head)
	return n, err == nil
}

// checkJetPack checks a release's JetPack against its L4T and targets.
func checkJetPack(r *Release, path string, errs *checker) {
	if r.JetPack == "" { // missing or of the wrong form: reported by the schema
		return
	}
	rows := errs.jetPackReleases()
	wantMajor, known := errs.facts().L4TMajorForJetPack(r.JetPack)
	caps, hasCaps := jetPackTargets(errs.facts(), rows, r.JetPack)
	if !known || !hasCaps {
		errs.addString(joinPath(path, "jetpack"), r.JetPack, "unknown JetPack version",
			"use one of "+knownJetPacks(rows)+", or, for a release newer than this jetbake, declare it under facts in the matrix "+
				"after checking NVIDIA's release notes (a row as 'jetbake facts --format json' prints one; see docs/facts.md)")
		return
	}
	checkL4T(r, path, wantMajor, errs)
	for j, c := range r.Targets {
		if c.IsZero() || hasSM(caps, c) {
			continue
		}
		t := c.String()
		fix := "use " + quoteCaps(caps)
		if others := jetPacksWith(rows, c); len(others) > 0 {
			fix += ", or build " + t + " in a release for JetPack " + strings.Join(others, ", ")
		}
		errs.addString(indexPath(joinPath(path, "targets"), j), t,
			"no JetPack "+r.JetPack+" module has SM "+t+": JetPack "+r.JetPack+" runs on "+describeModules(errs.facts(), caps)+" only", fix)
	}
}

// checkL4T checks that the L4T version belongs to the release's JetPack.
func checkL4T(r *Release, path string, wantMajor int, errs *checker) {
	if r.L4T == "" {
		return
	}
	p := joinPath(path, "l4t")
	example := strconv.Itoa(wantMajor) + ".x.y"
	var byL4T *computecap.JetPackRelease
	rows := errs.jetPackReleases()
	for i, row := range rows {
		if row.JetPack == r.JetPack {
			example = row.L4T
		}
		if (row.L4T == r.L4T || slices.Contains(row.AlsoL4T, r.L4T)) && byL4T == nil {
			byL4T = &rows[i]
		}
	}
	if major, _ := l4tMajor(r.L4T); major != wantMajor {
		errs.addString(p, r.L4T, "JetPack "+r.JetPack+" ships L4T "+strconv.Itoa(wantMajor)+".x, not "+strconv.Itoa(major)+".x",
			"use the L4T of JetPack "+r.JetPack+", e.g. "+quote(example)+", or correct the jetpack field")
		return
	}
	if byL4T != nil && byL4T.JetPack != r.JetPack && !strings.HasPrefix(r.JetPack, byL4T.JetPack+".") {
		errs.addString(p, r.L4T, "L4T "+r.L4T+" is JetPack "+byL4T.JetPack+", not "+r.JetPack,
			"use "+quote(example)+" for JetPack "+r.JetPack+", or set jetpack to "+quote(byL4T.JetPack))
	}
}

// quoteCaps writes capabilities as a quoted list: `"8.7" or "11.0"`.
func quoteCaps(caps []computecap.Capability) string {
	parts := make([]string, len(caps))
	for i, c := range caps {
		parts[i] = quote(c.String())
	}
	return strings.Join(parts, " or ")
}
