package tidy

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// modulePath is the module the checks read; moduleRoot is its folder.
const (
	modulePath = "github.com/jetbake/jetbake"
	moduleRoot = "../../.."
)

// No package of the module has an exported package-level variable: any
// importer could change it (a table, a schema, a version stamped in by
// -ldflags -X), so a table is an unexported value behind a function that
// returns a copy. The one exception is a sentinel error,
// `var ErrX = errors.New("...")`, as the standard library's io.EOF, which
// callers compare with errors.Is and never assign.
func TestNoExportedVariables(t *testing.T) {
	src := parseModule(t)
	for _, f := range src.files {
		forEachVar(f, func(name *ast.Ident, vs *ast.ValueSpec, i int) {
			if name.IsExported() && !sentinelError(name, vs, i) {
				t.Errorf("%s: exported package-level variable %s: make it unexported, with a function that returns a copy",
					src.position(name), name.Name)
			}
		})
	}
}

// Every -X of the Makefile's -ldflags that sets a variable of this module
// names an unexported package-level string variable that exists: -X sets
// nothing, silently, when the name is wrong.
func TestLinkerFlagsNameUnexportedVariables(t *testing.T) {
	targets := linkTargets(t, filepath.Join(moduleRoot, "Makefile"))
	require.NotEmpty(t, targets, "the Makefile stamps no version with -X")
	src := parseModule(t)
	for _, target := range targets {
		dir, name, _ := strings.Cut(strings.TrimPrefix(target, modulePath+"/"), ".")
		require.False(t, ast.IsExported(name), "-X %s: make %s unexported, with a function that returns it", target, name)
		found := false
		for _, f := range src.files {
			if filepath.ToSlash(src.dir(f)) != dir {
				continue
			}
			forEachVar(f, func(n *ast.Ident, vs *ast.ValueSpec, _ int) {
				typ, _ := vs.Type.(*ast.Ident)
				found = found || n.Name == name && typ != nil && typ.Name == "string"
			})
		}
		require.True(t, found, "-X %s: no package-level string variable %s in %s", target, name, dir)
	}
}

// sentinelError reports whether the i-th name of vs is `ErrX =
// errors.New(...)`.
func sentinelError(name *ast.Ident, vs *ast.ValueSpec, i int) bool {
	if !strings.HasPrefix(name.Name, "Err") || len(vs.Values) != len(vs.Names) {
		return false
	}
	call, ok := vs.Values[i].(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "errors" && sel.Sel.Name == "New"
}

// forEachVar calls fn with every package-level variable of f: its name,
// its spec and the name's index in the spec.
func forEachVar(f *ast.File, fn func(name *ast.Ident, vs *ast.ValueSpec, i int)) {
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				fn(name, vs, i)
			}
		}
	}
}

// source is the module's non-test Go files, parsed.
type source struct {
	fset  *token.FileSet
	files []*ast.File
}

// position is "file:line" of n, the file relative to the module's root.
func (s source) position(n ast.Node) string {
	pos := s.fset.Position(n.Pos())
	rel, _ := filepath.Rel(moduleRoot, pos.Filename)
	return rel + ":" + strconv.Itoa(pos.Line)
}

// dir is the folder of f relative to the module's root.
func (s source) dir(f *ast.File) string {
	rel, _ := filepath.Rel(moduleRoot, filepath.Dir(s.fset.File(f.Pos()).Name()))
	return rel
}

// parseModule parses the module's non-test Go files, outside testdata,
// hidden folders, bin/ and nested modules.
func parseModule(t *testing.T) source {
	t.Helper()
	src := source{fset: token.NewFileSet()}
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != moduleRoot && skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(src.fset, path, nil, parser.SkipObjectResolution)
		src.files = append(src.files, f)
		return err
	})
	require.NoError(t, err)
	require.NotEmpty(t, src.files, "no Go files under %s", moduleRoot)
	return src
}

// skipDir reports a folder that holds no source of this module.
func skipDir(path, name string) bool {
	if name == "testdata" || name == "bin" || strings.HasPrefix(name, ".") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// linkTargets returns the "path.name" of every -X in the Makefile that sets
// a variable of this module, with the Makefile's variables expanded.
func linkTargets(t *testing.T, makefile string) []string {
	t.Helper()
	f, err := os.Open(makefile)
	require.NoError(t, err)
	defer f.Close()
	vars := map[string]string{}
	assign := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*[:?]?=\s*(.*)$`)
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	flag := regexp.MustCompile(`-X\s+(\S+)=`)
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := ref.ReplaceAllStringFunc(sc.Text(), func(s string) string {
			if v, ok := vars[s[2:len(s)-1]]; ok {
				return v
			}
			return s
		})
		if m := assign.FindStringSubmatch(line); m != nil {
			vars[m[1]] = m[2]
		}
		for _, m := range flag.FindAllStringSubmatch(line, -1) {
			if strings.HasPrefix(m[1], modulePath+"/") {
				out = append(out, m[1])
			}
		}
	}
	require.NoError(t, sc.Err())
	return out
}
