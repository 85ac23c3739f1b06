package fleet

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// bound is what a term requires of one label: a set of values it must be
// in (nil: any), values it must not be, and integer bounds.
type bound struct {
	in     []string
	notIn  []string
	gt, lt *int
}

// term is a conjunction of label requirements, one bound per key: a node
// selector term. The zero term matches every node.
type term map[string]bound

// atom is one requirement, as Kubernetes writes it.
type atom struct {
	key    string
	op     corev1.NodeSelectorOperator
	values []string
}

func in(key string, values ...string) atom {
	return atom{key: key, op: corev1.NodeSelectorOpIn, values: values}
}
func notIn(key string, values ...string) atom {
	return atom{key: key, op: corev1.NodeSelectorOpNotIn, values: values}
}
func gt(key string, n int) atom {
	return atom{key: key, op: corev1.NodeSelectorOpGt, values: []string{strconv.Itoa(n)}}
}
func lt(key string, n int) atom {
	return atom{key: key, op: corev1.NodeSelectorOpLt, values: []string{strconv.Itoa(n)}}
}

// negate is the atom that holds on a labelled node exactly when a does not
// (every label an atom names is on every Jetson node doctor labels).
func (a atom) negate() atom {
	switch a.op {
	case corev1.NodeSelectorOpIn:
		return notIn(a.key, a.values...)
	case corev1.NodeSelectorOpNotIn:
		return in(a.key, a.values...)
	case corev1.NodeSelectorOpGt:
		n, _ := strconv.Atoi(a.values[0])
		return lt(a.key, n+1)
	default: // Lt
		n, _ := strconv.Atoi(a.values[0])
		return gt(a.key, n-1)
	}
}

// with returns t and a, and false when no node can satisfy both.
func (t term) with(a atom) (term, bool) {
	out := make(term, len(t)+1)
	for k, b := range t {
		out[k] = b
	}
	b := out[a.key]
	switch a.op {
	case corev1.NodeSelectorOpIn:
		if b.in == nil {
			b.in = slices.Clone(a.values)
		} else {
			b.in = slices.DeleteFunc(slices.Clone(b.in), func(v string) bool { return !slices.Contains(a.values, v) })
		}
	case corev1.NodeSelectorOpNotIn:
		for _, v := range a.values {
			if !slices.Contains(b.notIn, v) {
				b.notIn = append(slices.Clone(b.notIn), v)
			}
		}
	case corev1.NodeSelectorOpGt:
		n, _ := strconv.Atoi(a.values[0])
		if b.gt == nil || n > *b.gt {
			b.gt = &n
		}
	case corev1.NodeSelectorOpLt:
		n, _ := strconv.Atoi(a.values[0])
		if b.lt == nil || n < *b.lt {
			b.lt = &n
		}
	}
	if b.in != nil {
		b.in = slices.DeleteFunc(slices.Clone(b.in), func(v string) bool { return slices.Contains(b.notIn, v) || !b.inBounds(v) })
		if len(b.in) == 0 {
			return nil, false
		}
		b.notIn, b.gt, b.lt = nil, nil, nil // the values say it all
	}
	if b.gt != nil && b.lt != nil && *b.gt+1 >= *b.lt {
		return nil, false
	}
	out[a.key] = b
	return out, true
}

// inBounds reports whether v meets b's integer bounds.
func (b bound) inBounds(v string) bool {
	if b.gt == nil && b.lt == nil {
		return true
	}
	n, err := strconv.Atoi(v)
	return err == nil && (b.gt == nil || n > *b.gt) && (b.lt == nil || n < *b.lt)
}

// entails reports whether every node t matches also satisfies a.
func (t term) entails(a atom) bool {
	b, ok := t[a.key]
	if !ok {
		return false
	}
	switch a.op {
	case corev1.NodeSelectorOpIn:
		return b.in != nil && !slices.ContainsFunc(b.in, func(v string) bool { return !slices.Contains(a.values, v) })
	case corev1.NodeSelectorOpNotIn:
		if b.in != nil {
			return !slices.ContainsFunc(b.in, func(v string) bool { return slices.Contains(a.values, v) })
		}
		return !slices.ContainsFunc(a.values, func(v string) bool { return !slices.Contains(b.notIn, v) })
	}
	n, _ := strconv.Atoi(a.values[0])
	if b.in != nil {
		return !slices.ContainsFunc(b.in, func(v string) bool {
			m, err := strconv.Atoi(v)
			return err != nil || (a.op == corev1.NodeSelectorOpGt && m <= n) || (a.op == corev1.NodeSelectorOpLt && m >= n)
		})
	}
	if a.op == corev1.NodeSelectorOpGt {
		return b.gt != nil && *b.gt >= n
	}
	return b.lt != nil && *b.lt <= n
}

// dnf is a disjunction of terms: node selector terms.
type dnf []term

// and returns every term of d that also meets one of the options (a
// clause: any one of them), leaving out terms no node can match.
func (d dnf) and(clause [][]atom) dnf {
	var out dnf
	for _, t := range d {
		if slices.ContainsFunc(clause, func(opt []atom) bool { return !slices.ContainsFunc(opt, func(a atom) bool { return !t.entails(a) }) }) {
			out = append(out, t)
			continue
		}
	options:
		for _, opt := range clause {
			u := t
			for _, a := range opt {
				var ok bool
				if u, ok = u.with(a); !ok {
					continue options
				}
			}
			out = append(out, u)
		}
	}
	return out.dedupe()
}

// dedupe drops repeated terms and terms another term already covers.
func (d dnf) dedupe() dnf {
	seen := map[string]bool{}
	var out dnf
	for _, t := range d {
		if k := t.String(); !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return slices.DeleteFunc(out, func(t term) bool {
		return slices.ContainsFunc(out, func(u term) bool { return u.String() != t.String() && u.covers(t) })
	})
}

// covers reports whether every node t matches u matches too.
func (u term) covers(t term) bool {
	for _, a := range u.requirements() {
		if !t.entails(atom{key: a.Key, op: a.Operator, values: a.Values}) {
			return false
		}
	}
	return true
}

// requirements writes the term as Kubernetes requirements, by key.
func (t term) requirements() []corev1.NodeSelectorRequirement {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []corev1.NodeSelectorRequirement
	for _, k := range keys {
		b := t[k]
		if b.in != nil {
			out = append(out, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: sorted(b.in)})
			continue
		}
		if len(b.notIn) > 0 {
			out = append(out, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpNotIn, Values: sorted(b.notIn)})
		}
		if b.gt != nil {
			out = append(out, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpGt, Values: []string{strconv.Itoa(*b.gt)}})
		}
		if b.lt != nil {
			out = append(out, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpLt, Values: []string{strconv.Itoa(*b.lt)}})
		}
	}
	return out
}

func (t term) String() string {
	var b strings.Builder
	for _, r := range t.requirements() {
		b.WriteString(r.Key + " " + string(r.Operator) + " " + strings.Join(r.Values, ",") + "; ")
	}
	return b.String()
}

func sorted(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}
