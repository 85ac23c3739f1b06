package matrix

import (
	"slices"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// checkAppBase checks an app release's base against the table's framework
// containers (computecap's frameworkRows): a container built for another
// JetPack line (an SBSA container on JetPack 6, an -igpu one on a JetPack
// 7.0/7.1 Thor release, a 6.1 one on a 6.2 release) is refused in one
// sentence naming the container of the release's line; a tag of a known
// repository that the table has no row for is refused too, saying so,
// since jetbake cannot tell its line; and a release cuda other than the
// row's is refused. A base in another repository passes: the build reads
// it.
func checkAppBase(m *Matrix, r *Release, p string, errs *checker) {
	if m.App == nil || r.Base == "" || r.JetPack == "" {
		return
	}
	t := errs.facts()
	if _, ok := t.FrameworkRepositoryOf(r.Base); !ok {
		return
	}
	field := joinPath(p, "base")
	repo := repositoryOf(r.Base)
	rows := t.FrameworkContainersFor(m.App.Framework, r.JetPack)
	right, fix := "", "use a release whose JetPack has a container in the table ("+containerLines(t, m.App.Framework)+")"
	if len(rows) > 0 {
		right = rows[0].Tag
		if !t.SameFrameworkRepository(rows[0], r.Base) {
			right = rows[0].Ref()
		}
		fix = "set base to " + quote(containerRef(repo, rows[0]))
	}
	row, ok := t.FrameworkContainerOf(r.Base)
	if !ok {
		_, tag := computecap.SplitImageRef(r.Base)
		msg := "jetbake's table of NVIDIA's PyTorch containers has no row for tag " + quote(tag) + ", so it cannot tell which JetPack line the container is built for"
		if right != "" {
			msg += "; JetPack " + r.JetPack + "'s newest in the table is " + right
		}
		errs.addString(field, r.Base, msg,
			fix+", or add the tag's row to frameworkRows in computecap/facts.go after checking NVIDIA's PyTorch for Jetson release notes")
		return
	}
	if !computecap.LineCovers(row.Line, r.JetPack) {
		msg := "is NVIDIA's " + containerKind(row) + " PyTorch container for JetPack " + row.Line + ", not for JetPack " + r.JetPack
		if right != "" {
			msg += ", whose container is " + right
		} else {
			msg += ", for which the table has no container"
		}
		errs.addString(field, r.Base, msg+": "+lineMismatch(t, row, r.JetPack), fix)
		return
	}
	if msg, fix, bad := sbsaTarget(t, row, r, m.App.Framework); bad {
		errs.addString(field, r.Base, msg, fix)
		return
	}
	if row.CUDA != "" && r.CUDA != "" && row.CUDA != r.CUDA {
		errs.addString(joinPath(p, "cuda"), r.CUDA, "is not the CUDA of the release's base "+row.Tag+", which holds CUDA "+row.CUDA,
			"set cuda to "+quote(row.CUDA)+": an app release's cuda is its framework container's")
	}
}

// sbsaTarget refuses a Tegra (-igpu) container on a release of its line
// (JetPack 7.2, which serves Orin and Thor) that targets a GPU no Tegra
// CUDA runs on (Thor): in the sentence shape of a container of another
// line, naming the newest unified SBSA container as the fix.
func sbsaTarget(t *computecap.Table, row computecap.FrameworkContainer, r *Release, framework string) (msg, fix string, bad bool) {
	if row.Flavour != computecap.FlavourTegra {
		return "", "", false
	}
	for _, target := range r.Targets {
		soc, ok := t.SoCByCapability(target)
		if !ok || runsTegraCUDA(t, soc) || !slices.ContainsFunc(soc.JetPacks, func(l string) bool { return computecap.LineCovers(l, r.JetPack) }) {
			continue // a target of another line is refused by itself
		}
		gpu := "Jetson " + soc.Family + ", SM " + target.String()
		msg = "is NVIDIA's " + containerKind(row) + " PyTorch container for JetPack " + row.Line + ", not for " + gpu +
			", a target of this release: the -igpu containers are built on Tegra CUDA for Orin, and Jetson " + soc.Family +
			" runs NVIDIA's arm64 server (SBSA) CUDA"
		fix = "remove " + target.String() + " from targets and build it in a release on NVIDIA's unified SBSA container"
		if sbsa := newestSBSA(t, framework); sbsa != "" {
			fix += " (" + sbsa + ")"
		}
		return msg, fix, true
	}
	return "", "", false
}

// runsTegraCUDA reports whether a JetPack line of soc runs Tegra CUDA.
func runsTegraCUDA(t *computecap.Table, soc computecap.SoC) bool {
	for _, line := range soc.JetPacks {
		if f, ok := t.FlavourOfJetPack(line); ok && f == computecap.FlavourTegra {
			return true
		}
	}
	return false
}

// newestSBSA is the newest unified SBSA container of the table, "" when
// it has none.
func newestSBSA(t *computecap.Table, framework string) string {
	ref := ""
	for _, row := range t.Frameworks {
		if row.Framework == framework && row.Flavour == computecap.FlavourSBSA {
			ref = row.Ref() // rows are oldest first
		}
	}
	return ref
}

// containerKind names a row's build: "Tegra (-igpu)" or "unified SBSA".
func containerKind(row computecap.FrameworkContainer) string {
	if row.Flavour == computecap.FlavourSBSA {
		return "unified SBSA"
	}
	return "Tegra (-igpu)"
}

// lineMismatch says why a container of one JetPack line does not serve a
// release of another.
func lineMismatch(t *computecap.Table, row computecap.FrameworkContainer, jetpack string) string {
	want, ok := t.FlavourOfJetPack(jetpack)
	switch {
	case ok && want != row.Flavour && row.Flavour == computecap.FlavourTegra:
		return "the -igpu containers are built on Tegra CUDA for Orin, and JetPack " + jetpack + " runs NVIDIA's arm64 server (SBSA) CUDA"
	case ok && want != row.Flavour:
		return computecap.FlavourMismatch(row.Flavour, want)
	}
	return "each container is built against one JetPack line's CUDA and libraries"
}

// containerLines lists the JetPack lines the table has containers for.
func containerLines(t *computecap.Table, framework string) string {
	var lines []string
	for _, row := range t.Frameworks {
		if row.Framework == framework && (len(lines) == 0 || lines[len(lines)-1] != row.Line) {
			lines = append(lines, row.Line)
		}
	}
	return "JetPack " + strings.Join(lines, ", ")
}

// containerRef is row's reference as the base's repository repo names
// registries: repo with row's tag when it is row's repository, row's path
// on the same mirror host when repo is on a mirror, else row's own.
func containerRef(repo string, row computecap.FrameworkContainer) string {
	rowHost, rowPath, _ := strings.Cut(row.Repository, "/")
	host, path, _ := strings.Cut(repo, "/")
	switch {
	case path == rowPath:
		return repo + ":" + row.Tag
	case host != rowHost && strings.ContainsAny(host, ".:"):
		return host + "/" + rowPath + ":" + row.Tag
	}
	return row.Ref()
}

// repositoryOf is ref without its tag and digest, as written (a mirror
// host kept), for a fix that only changes the tag.
func repositoryOf(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if colon := strings.LastIndexByte(ref, ':'); colon > strings.LastIndexByte(ref, '/') {
		ref = ref[:colon]
	}
	return ref
}
