package computecap

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Facts are rows of the table in its JSON shape: `jetbake facts` prints
// the shipped rows this way, and a matrix declares the rows the table
// lacks (a JetPack release NVIDIA shipped after this jetbake) in the same
// shape, so that a user copies a row and edits it. Declare adds them to a
// table, after the rules every shipped row passes (CheckRows).
type Facts struct {
	// JetPacks are JetPack releases; sms names the SoCs that run one.
	JetPacks []JetPackRelease `json:"jetpacks,omitempty"`
	// SoCs are Jetson SoCs.
	SoCs []SoC `json:"socs,omitempty"`
	// Toolchain says which CUDA builds an SM.
	Toolchain []ToolchainRow `json:"toolchain,omitempty"`
	// BaseRepositories are base image repositories with their flavour.
	BaseRepositories []BaseRepository `json:"base_repositories,omitempty"`
	// BaseImages are base images known to exist.
	BaseImages []BaseImage `json:"base_images,omitempty"`
	// Frameworks are framework containers by JetPack line.
	Frameworks []FrameworkContainer `json:"frameworks,omitempty"`
	// CrossTargets are cross build rows, one per flavour.
	CrossTargets []CrossTarget `json:"cross_targets,omitempty"`
	// CrossRecipes are the cross build base recipe's rows, one per
	// JetPack line.
	CrossRecipes []CrossRecipe `json:"cross_recipes,omitempty"`
}

// The kinds of rows, as Facts' JSON names them.
const (
	RowsJetPacks         = "jetpacks"
	RowsSoCs             = "socs"
	RowsToolchain        = "toolchain"
	RowsBaseRepositories = "base_repositories"
	RowsBaseImages       = "base_images"
	RowsFrameworks       = "frameworks"
	RowsCrossTargets     = "cross_targets"
	RowsCrossRecipes     = "cross_recipes"
)

// Empty reports whether f holds no row.
func (f Facts) Empty() bool {
	return len(f.JetPacks)+len(f.SoCs)+len(f.Toolchain)+len(f.BaseRepositories)+len(f.BaseImages)+
		len(f.Frameworks)+len(f.CrossTargets)+len(f.CrossRecipes) == 0
}

// plus returns f's rows and then o's.
func (f Facts) plus(o Facts) Facts {
	return Facts{JetPacks: append(slices.Clone(f.JetPacks), o.JetPacks...), SoCs: append(slices.Clone(f.SoCs), o.SoCs...),
		Toolchain:        append(slices.Clone(f.Toolchain), o.Toolchain...),
		BaseRepositories: append(slices.Clone(f.BaseRepositories), o.BaseRepositories...),
		BaseImages:       append(slices.Clone(f.BaseImages), o.BaseImages...),
		Frameworks:       append(slices.Clone(f.Frameworks), o.Frameworks...),
		CrossTargets:     append(slices.Clone(f.CrossTargets), o.CrossTargets...),
		CrossRecipes:     append(slices.Clone(f.CrossRecipes), o.CrossRecipes...)}
}

// clone copies f's rows deeply (through JSON, which is their shape).
func (f Facts) clone() Facts {
	if f.Empty() {
		return Facts{}
	}
	var c Facts
	b, _ := json.Marshal(f)
	_ = json.Unmarshal(b, &c)
	return c
}

// Rows returns the table's rows in the JSON shape, JetPack releases with
// the SMs that run them (Releases); declared rows are left out.
func (t *Table) Rows() Facts {
	shipped := t.without(t.Declared)
	return shipped.clone()
}

// without returns t's rows less the declared ones in d (by key).
func (t *Table) without(d Facts) Facts {
	f := Facts{JetPacks: t.Releases(), SoCs: t.SoCs, Toolchain: t.Toolchain, BaseRepositories: t.BaseRepositories,
		BaseImages: t.BaseImages, Frameworks: t.Frameworks, CrossTargets: t.CrossTargets, CrossRecipes: t.CrossRecipes}
	if d.Empty() {
		return f
	}
	f.JetPacks = slices.DeleteFunc(f.JetPacks, func(r JetPackRelease) bool {
		return slices.ContainsFunc(d.JetPacks, func(x JetPackRelease) bool { return x.JetPack == r.JetPack })
	})
	f.SoCs = dropKeyed(f.SoCs, d.SoCs, func(s SoC) string { return s.Name })
	f.Toolchain = dropKeyed(f.Toolchain, d.Toolchain, func(r ToolchainRow) string { return r.SM.String() })
	f.BaseRepositories = dropKeyed(f.BaseRepositories, d.BaseRepositories, func(r BaseRepository) string { return r.Repository })
	f.BaseImages = dropKeyed(f.BaseImages, d.BaseImages, func(r BaseImage) string { return r.Ref })
	f.Frameworks = dropKeyed(f.Frameworks, d.Frameworks, FrameworkContainer.Ref)
	f.CrossTargets = dropKeyed(f.CrossTargets, d.CrossTargets, func(r CrossTarget) string { return string(r.Flavour) })
	f.CrossRecipes = dropKeyed(f.CrossRecipes, d.CrossRecipes, func(r CrossRecipe) string { return r.Line })
	return f
}

// dropKeyed returns a copy of rows without those whose key one of gone has.
func dropKeyed[R any](rows, gone []R, key func(R) string) []R {
	return slices.DeleteFunc(slices.Clone(rows), func(r R) bool {
		return slices.ContainsFunc(gone, func(g R) bool { return key(g) == key(r) })
	})
}

// RowProblem is one problem of a declared row (or, from CheckRows, of a
// shipped one): the row's kind and index, the field and its value, what is
// wrong and the fix.
type RowProblem struct {
	// Rows is the kind of row, such as RowsJetPacks.
	Rows string
	// Index is the row's index among the declared (or shipped) rows of its kind.
	Index int
	// Field is the field's JSON name, such as "l4t" or "sms[1]"; "" for
	// the whole row.
	Field string
	// Value is the field's value as JSON text; "" for the whole row.
	Value string
	// Message says what is wrong; Fix what to change.
	Message, Fix string
	// Redundant marks a declared row the shipped table now holds as it
	// is: the declaration can go. It is a warning, not an error.
	Redundant bool
}

// Path is the problem's place in a Facts document: "jetpacks[0].l4t".
func (p RowProblem) Path() string {
	s := p.Rows + "[" + strconv.Itoa(p.Index) + "]"
	if p.Field != "" {
		s += "." + p.Field
	}
	return s
}

// shippedSource names where a kind of row lives in jetbake's source.
func shippedSource(rows string) string {
	switch rows {
	case RowsCrossTargets:
		return "crossTargetRows in computecap/crossbase.go"
	case RowsCrossRecipes:
		return "crossRecipeRows in computecap/crossrecipe.go"
	}
	fn := map[string]string{RowsJetPacks: "jetPackRows", RowsSoCs: "socRows", RowsToolchain: "toolchainRows",
		RowsBaseRepositories: "baseRepositoryRows", RowsBaseImages: "baseImageRows", RowsFrameworks: "frameworkRows"}[rows]
	return fn + " in computecap/facts.go"
}

// Declare returns a copy of t with the declared rows d added, and the
// problems of d: a row that breaks a rule every shipped row passes
// (CheckRows), or that contradicts a row of t (t's row wins: the declared
// row is left out, and each field where the two differ is a problem), or
// that t now holds as declared (Redundant: the declaration can go). A
// declared JetPack release is added to the JetPack lines of the SoCs its
// sms name, and sorted among the releases by its L4T. Only the rows added
// are kept in the copy's Declared.
func (t *Table) Declare(d Facts) (*Table, []RowProblem) {
	out := t.Clone()
	shipped := t.Rows()
	var probs []RowProblem
	var idx declaredIndex
	var kept Facts // the declared rows added, in declaration order
	probs = append(probs, declareSimple(RowsSoCs, d.SoCs, shipped.SoCs,
		func(r SoC) string { return r.Name }, &out.SoCs, &kept.SoCs, &idx.socs)...)
	probs = append(probs, declareSimple(RowsToolchain, d.Toolchain, shipped.Toolchain,
		func(r ToolchainRow) string { return r.SM.String() }, &out.Toolchain, &kept.Toolchain, &idx.toolchain)...)
	probs = append(probs, out.declareJetPacks(d.JetPacks, shipped.JetPacks, &kept, &idx)...)
	probs = append(probs, declareSimple(RowsBaseRepositories, d.BaseRepositories, shipped.BaseRepositories,
		func(r BaseRepository) string { return r.Repository }, &out.BaseRepositories, &kept.BaseRepositories, &idx.bases)...)
	probs = append(probs, declareSimple(RowsBaseImages, d.BaseImages, shipped.BaseImages,
		func(r BaseImage) string { return r.Ref }, &out.BaseImages, &kept.BaseImages, &idx.images)...)
	probs = append(probs, declareSimple(RowsFrameworks, d.Frameworks, shipped.Frameworks,
		FrameworkContainer.Ref, &out.Frameworks, &kept.Frameworks, &idx.frameworks)...)
	probs = append(probs, declareSimple(RowsCrossTargets, d.CrossTargets, shipped.CrossTargets,
		func(r CrossTarget) string { return string(r.Flavour) }, &out.CrossTargets, &kept.CrossTargets, &idx.cross)...)
	probs = append(probs, declareSimple(RowsCrossRecipes, d.CrossRecipes, shipped.CrossRecipes,
		func(r CrossRecipe) string { return r.Line }, &out.CrossRecipes, &kept.CrossRecipes, &idx.recipes)...)
	probs = append(probs, out.check(kept, &idx)...)
	out.Declared = out.Declared.plus(kept)
	return out, probs
}

// declaredIndex maps each kept declared row to its index in the
// declaration, kind by kind, for the rules' problems.
type declaredIndex struct {
	jetpacks, socs, toolchain, bases, images, frameworks, cross, recipes []int
}

// declareSimple adds the declared rows of one kind that no shipped row
// has the key of.
func declareSimple[R any](kind string, rows, shipped []R, key func(R) string, into, kept *[]R, idx *[]int) []RowProblem {
	var probs []RowProblem
	for i, r := range rows {
		if p := against(kind, i, r, shipped, func(s R) bool { return key(s) == key(r) }); p != nil {
			probs = append(probs, p...)
			continue
		}
		*idx = append(*idx, i)
		*into = append(*into, r)
		*kept = append(*kept, r)
	}
	return probs
}

// declareJetPacks adds the declared JetPack releases: each to the lines
// of the SoCs its sms name, and among the releases by its L4T.
func (t *Table) declareJetPacks(rows, shipped []JetPackRelease, kept *Facts, idx *declaredIndex) []RowProblem {
	var probs []RowProblem
	for i, r := range rows {
		if p := against(RowsJetPacks, i, r, shipped, func(s JetPackRelease) bool { return s.JetPack == r.JetPack }); p != nil {
			probs = append(probs, p...)
			continue
		}
		if p := sameL4T(i, r, shipped); p != nil {
			probs = append(probs, *p)
			continue
		}
		idx.jetpacks = append(idx.jetpacks, i)
		kept.JetPacks = append(kept.JetPacks, r)
		for _, c := range r.Capabilities {
			if s := t.socIndexByCapability(c); s >= 0 && !t.SoCs[s].Supports(r.JetPack) {
				t.SoCs[s].JetPacks = append(slices.Clone(t.SoCs[s].JetPacks), r.JetPack)
			}
		}
		row := r
		row.Capabilities = nil
		at := len(t.JetPacks)
		if l, err := ParseL4TVersion(r.L4T); err == nil {
			at = slices.IndexFunc(t.JetPacks, func(o JetPackRelease) bool {
				ol, err := ParseL4TVersion(o.L4T)
				return err == nil && l.Less(ol)
			})
			if at < 0 {
				at = len(t.JetPacks)
			}
		}
		t.JetPacks = slices.Insert(t.JetPacks, at, row)
	}
	return probs
}

// sameL4T refuses a declared release whose L4T is a shipped release's.
func sameL4T(i int, r JetPackRelease, shipped []JetPackRelease) *RowProblem {
	for _, s := range shipped {
		if r.L4T != "" && (s.L4T == r.L4T || slices.Contains(s.AlsoL4T, r.L4T)) {
			return &RowProblem{Rows: RowsJetPacks, Index: i, Field: "l4t", Value: strconv.Quote(r.L4T),
				Message: "contradicts jetbake's table, where L4T " + r.L4T + " is JetPack " + s.JetPack + " (" +
					shippedSource(RowsJetPacks) + "); jetbake's row wins",
				Fix: "use the L4T of JetPack " + r.JetPack + " from NVIDIA's release notes, or remove the row and use JetPack " + s.JetPack}
		}
	}
	return nil
}

// against compares a declared row with the shipped row that same finds:
// nil when none; one Redundant problem when the two are equal (the
// declaration can go); else one problem per field where they differ.
func against[R any](kind string, i int, r R, shipped []R, same func(R) bool) []RowProblem {
	at := slices.IndexFunc(shipped, same)
	if at < 0 {
		return nil
	}
	diffs := diffFields(r, shipped[at])
	name := rowName(kind, any(shipped[at]))
	if len(diffs) == 0 {
		return []RowProblem{{Rows: kind, Index: i, Redundant: true,
			Message: "jetbake's table now holds " + name + " as declared (" + shippedSource(kind) + ")",
			Fix:     "remove the declared row: the declaration can go"}}
	}
	probs := make([]RowProblem, len(diffs))
	for k, d := range diffs {
		probs[k] = RowProblem{Rows: kind, Index: i, Field: d.field, Value: d.declared,
			Message: "contradicts jetbake's table, whose row for " + name + " has " + d.field + " " + d.shipped +
				" (" + shippedSource(kind) + "); jetbake's row wins",
			Fix: "remove the declared row, or set " + d.field + " to " + d.shipped + " if NVIDIA's notes agree"}
	}
	return probs
}

// rowName names a shipped row for messages: "JetPack 7.2", "SoC tegra234".
func rowName(kind string, row any) string {
	switch r := row.(type) {
	case JetPackRelease:
		return "JetPack " + r.JetPack
	case SoC:
		return "SoC " + r.Name + " (Jetson " + r.Family + ")"
	case ToolchainRow:
		return r.SM.SM()
	case BaseRepository:
		return r.Repository
	case BaseImage:
		return r.Ref
	case FrameworkContainer:
		return r.Ref()
	case CrossTarget:
		return "the " + r.Flavour.Name() + " cross row"
	case CrossRecipe:
		return "the cross recipe of JetPack " + r.Line
	}
	return kind
}

// fieldDiff is one field where a declared row and a shipped one differ,
// both values as JSON text.
type fieldDiff struct {
	field, declared, shipped string
}

// diffFields compares two rows of one struct type field by field, by
// their JSON names and values; empty values (null, "", [], 0, false) are
// equal. Fields another package adds to a row with JSON tags are compared
// too.
func diffFields(a, b any) []fieldDiff {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []fieldDiff
	for i := range va.NumField() {
		f := va.Type().Field(i)
		name := jsonName(f)
		if name == "" {
			continue
		}
		fa, fb := va.Field(i), vb.Field(i)
		if isEmpty(fa) && isEmpty(fb) {
			continue
		}
		ja, _ := json.Marshal(fa.Interface())
		jb, _ := json.Marshal(fb.Interface())
		if string(ja) != string(jb) {
			out = append(out, fieldDiff{field: name, declared: cutJSON(string(ja)), shipped: cutJSON(string(jb))})
		}
	}
	return out
}

// jsonName is a struct field's JSON name; "" when it has none or is "-".
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "" || tag == "-" || !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	return name
}

// isEmpty reports whether v is a zero value or an empty slice or map.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return v.IsZero()
}

// DeclaredJetPack reports whether the release of JetPack version jetpack
// rests on a declared row: its own, or the declared row of its line.
func (t *Table) DeclaredJetPack(jetpack string) bool {
	for _, r := range t.Declared.JetPacks {
		if LineCovers(r.JetPack, jetpack) {
			return true
		}
	}
	return false
}

// DeclaredSM reports whether SM c rests on a declared row: a declared
// SoC's GPU, or a declared toolchain row.
func (t *Table) DeclaredSM(c Capability) bool {
	for _, s := range t.Declared.SoCs {
		if sameSM(s.Capability, c) || slices.ContainsFunc(s.Aliases, func(a Capability) bool { return sameSM(a, c) }) {
			return true
		}
	}
	return slices.ContainsFunc(t.Declared.Toolchain, func(r ToolchainRow) bool { return sameSM(r.SM, c) })
}

// DeclaredBase reports whether the facts of base image ref rest on a
// declared row: its repository's, its own, or its framework container's.
func (t *Table) DeclaredBase(ref string) bool {
	repo, _ := SplitImageRef(ref)
	return slices.ContainsFunc(t.Declared.BaseRepositories, func(r BaseRepository) bool { return r.Repository == repo }) ||
		slices.ContainsFunc(t.Declared.BaseImages, func(r BaseImage) bool { return r.Ref == ref }) ||
		slices.ContainsFunc(t.Declared.Frameworks, func(r FrameworkContainer) bool { return t.SameFrameworkRepository(r, ref) && r.Tag == tagOf(ref) })
}

// tagOf is the tag of an image reference.
func tagOf(ref string) string {
	_, tag := SplitImageRef(ref)
	return tag
}

// cutJSON cuts JSON text for a message at QuoteLimit bytes, stating its
// length.
func cutJSON(s string) string {
	if len(s) <= QuoteLimit {
		return s
	}
	cut := QuoteLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
