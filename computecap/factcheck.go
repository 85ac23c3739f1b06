package computecap

// The rules every row of the table passes, shipped or declared: one
// checker, which CheckRows runs on a whole table (the shipped one passes,
// a test says so) and Declare on the rows a user declares.

import (
	"slices"
	"strconv"
	"strings"
)

// CheckRows applies the rules of the table to every row of t and returns
// what breaks them, with the rows' indices in t.
func (t *Table) CheckRows() []RowProblem {
	rows := Facts{JetPacks: t.Releases(), SoCs: t.SoCs, Toolchain: t.Toolchain, BaseRepositories: t.BaseRepositories,
		BaseImages: t.BaseImages, Frameworks: t.Frameworks, CrossTargets: t.CrossTargets, CrossRecipes: t.CrossRecipes}
	seq := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	idx := declaredIndex{jetpacks: seq(len(rows.JetPacks)), socs: seq(len(rows.SoCs)), toolchain: seq(len(rows.Toolchain)),
		bases: seq(len(rows.BaseRepositories)), images: seq(len(rows.BaseImages)), frameworks: seq(len(rows.Frameworks)),
		cross: seq(len(rows.CrossTargets)), recipes: seq(len(rows.CrossRecipes))}
	return t.check(rows, &idx)
}

// check applies the rules to rows (rows of t), reporting each at its
// index in idx.
func (t *Table) check(rows Facts, idx *declaredIndex) []RowProblem {
	var probs []RowProblem
	add := func(kind string, i int) func(field, value, message, fix string) {
		return func(field, value, message, fix string) {
			p := RowProblem{Rows: kind, Index: i, Field: field, Value: value, Message: message, Fix: fix}
			if !slices.ContainsFunc(probs, func(q RowProblem) bool { return q.Path() == p.Path() }) {
				probs = append(probs, p) // one problem a field: the first rule it breaks
			}
		}
	}
	releases := t.Releases()
	slices.Reverse(releases) // the nearest releases first: a new release is compared with the newest
	for k, r := range rows.JetPacks {
		t.checkJetPackRow(r, releases, add(RowsJetPacks, idx.jetpacks[k]))
	}
	for k, s := range rows.SoCs {
		t.checkSoCRow(s, add(RowsSoCs, idx.socs[k]))
	}
	for k, r := range rows.Toolchain {
		checkToolchainRow(r, add(RowsToolchain, idx.toolchain[k]))
	}
	for k, r := range rows.BaseRepositories {
		checkBaseRepositoryRow(r, add(RowsBaseRepositories, idx.bases[k]))
	}
	for k, r := range rows.BaseImages {
		if _, ok := t.BaseRepositoryOf(r.Ref); !ok || tagOf(r.Ref) == "" {
			add(RowsBaseImages, idx.images[k])("ref", strconv.Quote(r.Ref), "is not an image with a tag in a base repository of the table",
				"declare its repository in base_repositories, or write the reference as repository:tag")
		}
	}
	for k, r := range rows.Frameworks {
		t.checkFrameworkRow(r, add(RowsFrameworks, idx.frameworks[k]))
	}
	for k, r := range rows.CrossTargets {
		checkCrossRow(r, add(RowsCrossTargets, idx.cross[k]))
	}
	for k, r := range rows.CrossRecipes {
		checkCrossRecipeRow(r, add(RowsCrossRecipes, idx.recipes[k]))
	}
	return probs
}

// problemFunc records one problem of a row: field, value, message, fix.
type problemFunc func(field, value, message, fix string)

// checkJetPackRow applies the JetPack rules to r among releases (the
// table's, r's own row included, which is skipped).
func (t *Table) checkJetPackRow(r JetPackRelease, releases []JetPackRelease, add problemFunc) {
	l4t, l4tErr := ParseL4TVersion(r.L4T)
	switch {
	case !validJetPack(r.JetPack):
		add("jetpack", strconv.Quote(r.JetPack), "is not a JetPack version", "write it as NVIDIA does, such as \"7.3\" or \"6.2.1\"")
		return
	case l4tErr != nil || strings.Count(r.L4T, ".") != 2:
		add("l4t", strconv.Quote(r.L4T), "is not a full L4T version", "write it as /etc/nv_tegra_release gives it, such as \"39.3.0\"")
		return
	case r.CUDA.IsZero():
		add("cuda", `""`, "is missing", "write the CUDA release the JetPack ships, such as \"13.2\"")
		return
	case !validUbuntu(r.Ubuntu):
		add("ubuntu", strconv.Quote(r.Ubuntu), "is not an Ubuntu release", "write it as \"24.04\"")
	}
	if want := ruleOf(r.Flavour); want == "" {
		add("flavour", strconv.Quote(string(r.Flavour)), "is not a CUDA flavour", "use \"tegra\" (JetPack 6 and earlier) or \"sbsa\" (JetPack 7 and later)")
	} else if r.Rule != want {
		add("rule", strconv.Quote(string(r.Rule)), "is not the host rule of "+r.Flavour.WithArticle()+" release",
			"use "+strconv.Quote(string(want)))
	}
	if len(r.DriverDirs) == 0 {
		add("driver_dirs", "[]", "is empty: the entrypoint would not know where the host's libcuda is",
			"copy driver_dirs from the row of the JetPack line before it ('jetbake facts')")
	}
	if len(r.Capabilities) == 0 {
		add("sms", "[]", "is empty: no Jetson runs the release", "list the SMs of the SoCs that run it, such as [\"8.7\", \"11.0\"]")
	}
	for j, c := range r.Capabilities {
		field := "sms[" + strconv.Itoa(j) + "]"
		if !t.IsTegra(c) {
			add(field, strconv.Quote(c.String()), "is no Jetson SoC's SM in the table", "declare the SoC in socs, or remove it")
		} else if err := t.CanCompile(c, r.CUDA); err != nil {
			add("cuda", strconv.Quote(r.CUDA.String()), err.Error(), "check the CUDA of the release in NVIDIA's notes, or declare a toolchain row")
		}
	}
	for _, rule := range []func(JetPackRelease, L4TVersion, JetPackRelease, problemFunc){checkLine, checkOrder} {
		for _, o := range releases {
			if o.JetPack != r.JetPack {
				rule(r, l4t, o, add)
			}
		}
	}
}

// checkLine applies the line rules between two releases: the L4T line
// matches the JetPack line, and one flavour per L4T line. It reports the
// first rule r breaks against o.
func checkLine(r JetPackRelease, l4t L4TVersion, o JetPackRelease, add problemFunc) {
	ol, err := ParseL4TVersion(o.L4T)
	if err != nil {
		return
	}
	name := "JetPack " + o.JetPack + " (L4T " + o.L4T + ")"
	jpMajor, oMajor := firstPart(r.JetPack), firstPart(o.JetPack)
	switch {
	case l4t.Major == ol.Major && jpMajor != oMajor:
		add("l4t", strconv.Quote(r.L4T), "is on L4T R"+strconv.Itoa(ol.Major)+", the line of JetPack "+oMajor+" ("+name+"), not of JetPack "+jpMajor,
			"use the L4T of JetPack "+r.JetPack+" from NVIDIA's release notes")
	case !r.Preview && !o.Preview && majorMinor(r.JetPack) == majorMinor(o.JetPack) && l4t.Major != ol.Major:
		add("l4t", strconv.Quote(r.L4T), "is not on L4T R"+strconv.Itoa(ol.Major)+", the line of "+name,
			"use an L4T R"+strconv.Itoa(ol.Major)+" version")
	case l4t.Major == ol.Major && r.Flavour != o.Flavour:
		add("flavour", strconv.Quote(string(r.Flavour)), "differs from the flavour of L4T R"+strconv.Itoa(ol.Major)+"'s "+name+", "+string(o.Flavour),
			"use "+strconv.Quote(string(o.Flavour)))
	}
}

// checkOrder applies the order rules between two releases: a newer
// JetPack has a newer L4T, and no older CUDA, Ubuntu or flavour.
func checkOrder(r JetPackRelease, l4t L4TVersion, o JetPackRelease, add problemFunc) {
	ol, err := ParseL4TVersion(o.L4T)
	if err != nil {
		return
	}
	name := "JetPack " + o.JetPack + " (L4T " + o.L4T + ")"
	newer := compareVersions(r.JetPack, o.JetPack) > 0
	switch {
	case newer == l4t.Less(ol) && l4t != ol:
		add("l4t", strconv.Quote(r.L4T), "is out of order: "+name+" is "+order(newer)+" JetPack "+r.JetPack+" but its L4T is "+order(!newer)+" it",
			"check the L4T and the JetPack version in NVIDIA's release notes")
	case newer && r.CUDA.Less(o.CUDA), !newer && o.CUDA.Less(r.CUDA):
		add("cuda", strconv.Quote(r.CUDA.String()), "is out of order: "+name+" is "+order(newer)+" JetPack "+r.JetPack+
			" but ships CUDA "+o.CUDA.String(), "check the CUDA of JetPack "+r.JetPack+" in NVIDIA's release notes")
	case newer && r.Flavour == FlavourTegra && o.Flavour == FlavourSBSA:
		add("flavour", `"tegra"`, "follows "+name+", which is SBSA: JetPack 7 and later ship SBSA CUDA", `use "sbsa"`)
	case newer && validUbuntu(r.Ubuntu) && validUbuntu(o.Ubuntu) && compareVersions(r.Ubuntu, o.Ubuntu) < 0:
		add("ubuntu", strconv.Quote(r.Ubuntu), "is older than the Ubuntu "+o.Ubuntu+" of "+name+", an older JetPack",
			"check the Ubuntu of JetPack "+r.JetPack+" in NVIDIA's release notes")
	}
}

// order words a comparison: "newer than" or "older than".
func order(newer bool) string {
	if newer {
		return "older than"
	}
	return "newer than"
}

// checkSoCRow applies the SoC rules: the fields a host is recognised by,
// none of them another SoC's.
func (t *Table) checkSoCRow(s SoC, add problemFunc) {
	switch {
	case !strings.HasPrefix(s.Name, "tegra"):
		add("name", strconv.Quote(s.Name), "is not a Tegra device-tree name", "write it as the compatible entry does, such as \"tegra264\"")
	case s.SocID <= 0:
		add("soc_id", strconv.Itoa(s.SocID), "is not a soc_id", "write /sys/devices/soc0/soc_id's decimal value")
	case s.Family == "":
		add("family", `""`, "is empty", "name the Jetson family, such as \"Thor\"")
	case !s.Capability.Valid() || s.Capability.ArchSpecific:
		add("sm", strconv.Quote(s.Capability.String()), "is not the GPU's compute capability", "write it as \"11.0\"")
	}
	for j, line := range s.JetPacks {
		if !validJetPack(line) {
			add("jetpacks["+strconv.Itoa(j)+"]", strconv.Quote(line), "is not a JetPack line", "write it as \"7\" or \"7.2\"")
		}
	}
	for _, o := range t.SoCs {
		if o.Name == s.Name {
			continue
		}
		switch {
		case o.SocID == s.SocID:
			add("soc_id", strconv.Itoa(s.SocID), "is the soc_id of "+o.Name+" (Jetson "+o.Family+")", "check /sys/devices/soc0/soc_id on the board")
		case sameSM(o.Capability, s.Capability):
			add("sm", strconv.Quote(s.Capability.String()), "is the GPU of "+o.Name+" (Jetson "+o.Family+")", "check the SM in the CUDA programming guide")
		case o.Family == s.Family:
			add("family", strconv.Quote(s.Family), "is the family of "+o.Name, "name the new family")
		}
	}
}

// checkToolchainRow applies the toolchain rules.
func checkToolchainRow(r ToolchainRow, add problemFunc) {
	switch {
	case !r.SM.Valid():
		add("sm", strconv.Quote(r.SM.String()), "is not a compute capability", "write it as \"12.5\"")
	case r.Since.IsZero():
		add("since", `""`, "is missing", "write the first CUDA whose nvcc builds the SM, from the CUDA release notes")
	case !r.Until.IsZero() && !r.Since.Less(r.Until):
		add("until", strconv.Quote(r.Until.String()), "is not after since "+r.Since.String(), "check the CUDA release notes")
	case r.Until.IsZero() != (r.Gone == ""):
		add("gone", strconv.Quote(r.Gone), "goes with until: say why the SM stopped being a target, or neither", "set both or neither")
	}
}

// checkBaseRepositoryRow applies the base repository rules.
func checkBaseRepositoryRow(r BaseRepository, add problemFunc) {
	switch {
	case !strings.Contains(r.Repository, "/") || strings.ContainsAny(r.Repository, ":@ "):
		add("repository", strconv.Quote(r.Repository), "is not a repository without a tag", "write it as \"nvcr.io/nvidia/cuda\"")
	case ruleOf(r.Flavour) == "":
		add("flavour", strconv.Quote(string(r.Flavour)), "is not a CUDA flavour", "use \"tegra\" or \"sbsa\"")
	case !slices.Contains([]TagScheme{TagCUDA, TagL4T, TagNoCUDA}, r.Tags):
		add("tags", strconv.Quote(string(r.Tags)), "is not a tag scheme", "use \"cuda\", \"l4t\" or \"no-cuda\"")
	}
}

// checkFrameworkRow applies the framework container rules: the flavour is
// its JetPack line's.
func (t *Table) checkFrameworkRow(r FrameworkContainer, add problemFunc) {
	switch {
	case r.Framework != FrameworkPyTorch:
		add("framework", strconv.Quote(r.Framework), "is not a framework jetbake knows", `use "pytorch"`)
	case r.Repository == "" || r.Tag == "":
		add("tag", strconv.Quote(r.Tag), "needs a repository and a tag", "write both as NGC lists them")
	default:
		f, ok := t.FlavourOfJetPack(r.Line)
		switch {
		case !ok:
			add("line", strconv.Quote(r.Line), "is not a JetPack line of the table", "use a JetPack version such as \"7.2\", or declare it in jetpacks")
		case f != r.Flavour && r.Note == "":
			add("flavour", strconv.Quote(string(r.Flavour)), "is not the flavour of JetPack "+r.Line+", "+string(f),
				"use "+strconv.Quote(string(f))+", or say in note who reported the container on that line")
		}
	}
}

// checkCrossRow applies the cross row rules.
func checkCrossRow(r CrossTarget, add problemFunc) {
	switch {
	case ruleOf(r.Flavour) == "":
		add("flavour", strconv.Quote(string(r.Flavour)), "is not a CUDA flavour", "use \"tegra\" or \"sbsa\"")
	case "targets/"+r.Dir != r.Flavour.TargetDir():
		add("dir", strconv.Quote(r.Dir), "is not the targets folder of "+r.Flavour.WithArticle()+" CUDA",
			"use "+strconv.Quote(strings.TrimPrefix(r.Flavour.TargetDir(), "targets/")))
	case strings.Count(r.Package, "%d") != 2:
		add("package", strconv.Quote(r.Package), "does not hold %d twice, for the CUDA major and minor", "write it as \"cuda-cross-sbsa-%d-%d\"")
	case r.Platform != "linux/amd64":
		add("platform", strconv.Quote(r.Platform), "is not the cross packages' platform", `use "linux/amd64"`)
	}
}

// checkCrossRecipeRow applies the cross recipe rules: a JetPack line and
// its Ubuntu, and a recipe (NVIDIA's cross repository, devel images of
// that Ubuntu) or the reason there is none.
func checkCrossRecipeRow(r CrossRecipe, add problemFunc) {
	switch {
	case !validJetPack(r.Line) || strings.Contains(r.Line, "."):
		add("line", strconv.Quote(r.Line), "is not a JetPack line", "write the JetPack major, such as \"8\"")
	case !validUbuntu(r.Ubuntu):
		add("ubuntu", strconv.Quote(r.Ubuntu), "is not an Ubuntu release", "write it as \"24.04\"")
	case r.Unsupported == "" && (r.Repository == "" || len(r.DevelImages) == 0):
		add("devel_images", "[]", "and repository are needed for a recipe", "name NVIDIA's cross repository and amd64 devel images, or say in unsupported why there is none")
	}
	for j, img := range r.DevelImages {
		if !strings.HasSuffix(img, "-devel-ubuntu"+r.Ubuntu) {
			add("devel_images["+strconv.Itoa(j)+"]", strconv.Quote(img), "is not an amd64 CUDA devel image of Ubuntu "+r.Ubuntu,
				"name NVIDIA's image, such as \"nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu"+r.Ubuntu+"\"")
		}
	}
}

// ruleOf is the host rule of a flavour; "" for an unknown flavour.
func ruleOf(f Flavour) HostRule {
	switch f {
	case FlavourTegra:
		return RuleL4T
	case FlavourSBSA:
		return RuleDriverCUDA
	}
	return ""
}

// validUbuntu accepts "24.04": two parts of two digits.
func validUbuntu(s string) bool {
	a, b, ok := strings.Cut(s, ".")
	return ok && len(a) == 2 && len(b) == 2 && allDigits(a) && allDigits(b)
}

// firstPart is a version's first dot-separated part.
func firstPart(v string) string {
	head, _, _ := strings.Cut(v, ".")
	return head
}

// compareVersions compares dot-separated numeric versions part by part, a
// missing part as 0: "7.2.1" < "7.3".
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := 0, 0
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
