// Package codemap checks the module's imports against its code map: the
// table in docs/code-map.md that gives each package its job and what it may
// import. The table is the one source; the test reads it, asks `go list`
// for every package's imports and fails on an import the table does not
// allow, and on a package the table does not name. OwnLines and CheckSize
// keep a package within its size (builder/imagebuild's own files, 3,200
// lines): one that grows past it moves a whole job into a package beside it.
//
// The table is one Markdown table of three columns (package, job, may
// import). Its first and last cells name packages in backquotes, relative
// to the module path; a name may end in `/*spec` or `/...` to cover a
// folder's packages. The last cell may instead, or besides, say:
//   - "standard library only": no package of the module, no third party;
//   - "standard library and third parties": no package of the module;
//   - "all of the above": the packages of the rows above it;
//   - "anything": every package.
//
// A row that names packages allows them, the standard library and third
// parties; with the word "only" (as in "`computecap` only") it allows no
// third party.
//
// The cells are read with a line-by-line reading of the table: the code
// map is a single GitHub-flavoured table whose cells hold no pipes, and a
// Markdown library would parse the whole page to find it.
package codemap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Rule is one row of the code map.
type Rule struct {
	// Line is the row's line in the file, from 1.
	Line int
	// Packages are the row's package patterns, relative to the module.
	Packages []string
	// Allowed are the module packages (patterns) its packages may import.
	Allowed []string
	// ThirdParty is whether its packages may import outside the module
	// and the standard library.
	ThirdParty bool
	// Anything is whether its packages may import any package.
	Anything bool
}

// Package is what `go list` says of one package of the module.
type Package struct {
	// ImportPath is the package's import path, relative to the module.
	ImportPath string
	// Imports are its non-test imports: module packages relative to the
	// module, others as they are.
	Imports []string
	// Std are the imports that belong to the standard library.
	Std map[string]bool
}

var quoted = regexp.MustCompile("`([^`]+)`")

// Parse reads the code map's table from a Markdown page.
func Parse(r io.Reader) ([]Rule, error) {
	var rules []Rule
	var covered []string
	sc := bufio.NewScanner(r)
	inTable := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		switch {
		case !inTable && len(cells) == 3 && strings.Contains(cells[2], "may import"):
			inTable = true
			continue
		case !inTable || strings.HasPrefix(line, "|---"):
			continue
		case len(cells) != 3:
			return nil, fmt.Errorf("line %d: a code map row has 3 cells (package, job, may import), this one %d", n, len(cells))
		}
		rule, err := parseRow(n, cells, covered)
		if err != nil {
			return nil, err
		}
		covered = append(covered, rule.Packages...)
		rules = append(rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the code map: %w", err)
	}
	if len(rules) == 0 {
		return nil, errors.New("no code map table: want a table whose third column is headed \"may import\"")
	}
	return rules, nil
}

func parseRow(n int, cells, above []string) (Rule, error) {
	rule := Rule{Line: n, Packages: names(cells[0])}
	if len(rule.Packages) == 0 {
		return Rule{}, fmt.Errorf("line %d: the row names no package in backquotes", n)
	}
	allow := cells[2]
	switch {
	case strings.Contains(allow, "anything"):
		rule.Anything = true
	case strings.Contains(allow, "all of the above"):
		rule.Allowed, rule.ThirdParty = append([]string(nil), above...), true
	case strings.Contains(allow, "standard library only"):
	default:
		rule.Allowed = names(allow)
		rule.ThirdParty = !strings.Contains(allow, "only")
		if len(rule.Allowed) == 0 && !strings.Contains(allow, "third parties") {
			return Rule{}, fmt.Errorf("line %d: %q allows nothing: name packages in backquotes, or say \"standard library only\"", n, strings.TrimSpace(allow))
		}
	}
	return rule, nil
}

func names(cell string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// matches is whether a package pattern of the map covers pkg.
func matches(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	ok, err := path.Match(pattern, pkg)
	return err == nil && ok
}

func anyMatch(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if matches(p, pkg) {
			return true
		}
	}
	return false
}

// Check returns a sentence for every package no row names, every package
// two rows name, and every import a package's row does not allow.
func Check(rules []Rule, pkgs []Package, file string) []string {
	var problems []string
	for _, p := range pkgs {
		var own []Rule
		for _, r := range rules {
			if anyMatch(r.Packages, p.ImportPath) {
				own = append(own, r)
			}
		}
		switch len(own) {
		case 0:
			problems = append(problems, fmt.Sprintf("%s: no row of %s names the package: add a row with its job and what it may import", p.ImportPath, file))
			continue
		case 1:
		default:
			problems = append(problems, fmt.Sprintf("%s: rows at lines %d and %d of %s both name the package: keep one", p.ImportPath, own[0].Line, own[1].Line, file))
			continue
		}
		problems = append(problems, checkImports(own[0], p, file)...)
	}
	sort.Strings(problems)
	return problems
}

func checkImports(r Rule, p Package, file string) []string {
	var problems []string
	for _, imp := range p.Imports {
		switch {
		case r.Anything || p.Std[imp]:
			continue
		case isModule(imp):
			if anyMatch(r.Allowed, imp) {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s imports %s, which the row at line %d of %s does not allow: drop the import, or add `%s` to the row's \"may import\" if the map should change", p.ImportPath, imp, r.Line, file, imp))
		case !r.ThirdParty:
			problems = append(problems, fmt.Sprintf("%s imports %s, a third party, which the row at line %d of %s does not allow: drop the import, or drop the word \"only\" from the row", p.ImportPath, imp, r.Line, file))
		}
	}
	return problems
}

// isModule is whether imp is one of the module's packages: List gives
// them relative to the module, so their first element has no dot, while a
// third party's always has one (its host).
func isModule(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

// List runs `go list` in dir and returns the module's packages with their
// non-test imports, module paths made relative to the module.
func List(ctx context.Context, dir string) ([]Package, error) {
	modPath, err := goOutput(ctx, dir, "list", "-m")
	if err != nil {
		return nil, err
	}
	modPath = strings.TrimSpace(modPath)
	out, err := goOutput(ctx, dir, "list", "-json=ImportPath,Imports,Standard", "-deps", "./...")
	if err != nil {
		return nil, err
	}
	std := map[string]bool{}
	var raw []struct {
		ImportPath string
		Imports    []string
		Standard   bool
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
			Standard   bool
		}
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		if p.Standard {
			std[p.ImportPath] = true
		}
		if p.ImportPath == modPath || strings.HasPrefix(p.ImportPath, modPath+"/") {
			raw = append(raw, p)
		}
	}
	rel := func(imp string) string {
		if r, ok := strings.CutPrefix(imp, modPath+"/"); ok {
			return r
		}
		return imp
	}
	pkgs := make([]Package, 0, len(raw))
	for _, p := range raw {
		pkg := Package{ImportPath: rel(p.ImportPath), Std: std}
		for _, imp := range p.Imports {
			pkg.Imports = append(pkg.Imports, rel(imp))
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs, nil
}

func goOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
