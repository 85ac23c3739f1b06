package tei

import (
	"fmt"
	"strconv"
	"strings"
)

// Range is one pattern of a compute_cap_matching arm: a number (Lo == Hi),
// an inclusive range "80..=89", or "_" (Any).
type Range struct {
	Lo  int  `json:"lo"`
	Hi  int  `json:"hi"`
	Any bool `json:"any,omitempty"`
}

func (r Range) matches(v int) bool { return r.Any || (v >= r.Lo && v <= r.Hi) }

// Arm is one arm of the match in compute_cap_matching: (Runtime, Compile) => Result.
type Arm struct {
	Runtime Range `json:"runtime"`
	Compile Range `json:"compile"`
	Result  bool  `json:"result"`
}

// Table is compute_cap_matching as compiled: its arms in order, the first
// that matches deciding, as Rust's match does.
type Table []Arm

// Accepts reports whether a GPU of runtime capability (87) may run code
// compiled for compile, as TEI's compute_cap_matching answers.
func (t Table) Accepts(runtime, compile int) bool {
	for _, a := range t {
		if a.Runtime.matches(runtime) && a.Compile.matches(compile) {
			return a.Result
		}
	}
	return false
}

// computeCapFn is the function whose match the table is read from.
const computeCapFn = "fn compute_cap_matching("

// ParseComputeCapTable reads the arms of fn compute_cap_matching in the
// source of backends/candle/src/compute_cap.rs, arms written one per line
// as TEI writes them: "(80..=89, 80) => true,". A hand-written reader
// rather than a Rust parser: the stand-in only needs the arms' patterns,
// and a line it cannot read fails the build naming it, as rustc would fail
// on code it cannot compile.
func ParseComputeCapTable(source string) (Table, error) {
	start := strings.Index(source, computeCapFn)
	if start < 0 {
		return nil, fmt.Errorf("no %s...) in the source", strings.TrimSpace(computeCapFn))
	}
	var table Table
	lines := strings.Split(source[start:], "\n")
	for n, line := range lines[1:] {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "}" || strings.HasPrefix(line, "fn ") || strings.HasPrefix(line, "pub fn ") {
			break
		}
		if !strings.HasPrefix(line, "(") || !strings.Contains(line, "=>") {
			continue
		}
		arm, err := parseArm(line)
		if err != nil {
			return nil, fmt.Errorf("line %d of compute_cap_matching: %q: %w", n+2, line, err)
		}
		table = append(table, arm)
	}
	if len(table) == 0 {
		return nil, fmt.Errorf("compute_cap_matching has no arms")
	}
	return table, nil
}

// parseArm reads "(80..=89, 80) => true,".
func parseArm(line string) (Arm, error) {
	pattern, result, _ := strings.Cut(line, "=>")
	pattern = strings.TrimSpace(pattern)
	if !strings.HasPrefix(pattern, "(") || !strings.HasSuffix(pattern, ")") {
		return Arm{}, fmt.Errorf("not a (runtime, compile) pattern")
	}
	rt, cc, ok := strings.Cut(strings.Trim(pattern, "()"), ",")
	if !ok {
		return Arm{}, fmt.Errorf("not a (runtime, compile) pattern")
	}
	var arm Arm
	var err error
	if arm.Runtime, err = parseRange(rt); err != nil {
		return Arm{}, err
	}
	if arm.Compile, err = parseRange(cc); err != nil {
		return Arm{}, err
	}
	switch strings.TrimSuffix(strings.TrimSpace(result), ",") {
	case "true":
		arm.Result = true
	case "false":
	default:
		return Arm{}, fmt.Errorf("the arm's value is not true or false")
	}
	return arm, nil
}

// parseRange reads "_", "87" or "80..=89".
func parseRange(s string) (Range, error) {
	s = strings.TrimSpace(s)
	if s == "_" {
		return Range{Any: true}, nil
	}
	lo, hi, isRange := strings.Cut(s, "..=")
	if !isRange {
		hi = lo
	}
	l, err1 := strconv.Atoi(strings.TrimSpace(lo))
	h, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || l > h {
		return Range{}, fmt.Errorf("%q is not a number, a range A..=B or _", s)
	}
	return Range{Lo: l, Hi: h}, nil
}
