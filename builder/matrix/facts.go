package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/computecap"
)

// KeyFacts marks an image whose release rests on facts the matrix
// declares (FactsDeclared) rather than on jetbake's own table.
const KeyFacts = "io.jetbake.facts"

// FactsDeclared is KeyFacts' value.
const FactsDeclared = "declared"

// KeyFactsJetPack holds the declared JetPack row a release rests on, as
// compact JSON in the table's shape, so that pick and fleet apply the host
// rule with it from what the registry says.
const KeyFactsJetPack = "io.jetbake.facts.jetpack"

// DeclaredJetPackRow is the declared JetPack row of release r as
// KeyFactsJetPack holds it; "" when r's JetPack is jetbake's own.
func (m *Matrix) DeclaredJetPackRow(r *Release) string {
	for _, row := range m.Facts().Declared.JetPacks {
		if computecap.LineCovers(row.JetPack, r.JetPack) {
			b, err := json.Marshal(row)
			if err != nil {
				return ""
			}
			return string(b)
		}
	}
	return ""
}

// ParseDeclaredJetPack reads KeyFactsJetPack's value, strictly.
func ParseDeclaredJetPack(v string) (computecap.JetPackRelease, error) {
	var row computecap.JetPackRelease
	if err := jsonv2.Unmarshal([]byte(v), &row, jsonv2.RejectUnknownMembers(true)); err != nil {
		return row, err
	}
	if row.JetPack == "" || row.L4T == "" || row.CUDA.IsZero() {
		return row, errors.New("needs jetpack, l4t and cuda")
	}
	return row, nil
}

// DeclaredFacts are the Jetson facts a matrix declares for what jetbake's
// table lacks (a JetPack release NVIDIA shipped after this jetbake): rows
// in the table's JSON shape (computecap.Facts, which `jetbake facts`
// prints), under "facts" or in the file "facts" names, relative to the
// matrix.
type DeclaredFacts struct {
	// File is the file "facts" names, as written; "" when the rows are
	// in the matrix.
	File string
	// Rows are the rows declared, once read.
	Rows computecap.Facts
	// raw is the inline object, decoded strictly by the check.
	raw json.RawMessage
}

// UnmarshalJSON reads a file name or an object of rows.
func (d *DeclaredFacts) UnmarshalJSON(b []byte) error {
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '"' {
		return json.Unmarshal(s, &d.File)
	}
	d.raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the file name, or the rows.
func (d DeclaredFacts) MarshalJSON() ([]byte, error) {
	if d.File != "" {
		return json.Marshal(d.File)
	}
	return json.Marshal(d.Rows)
}

// factsFix is the fix of a facts document that cannot be read.
const factsFix = "write rows in the shape 'jetbake facts --format json' prints"

// declareFacts reads the matrix's declared facts and adds them to the
// table of the check: each problem of a row becomes an error (a
// redundant row a warning) at its field, in the matrix or in the facts
// file. It returns the warnings.
func declareFacts(m *Matrix, data []byte, pos positions, checkFiles bool, errs *checker) []FieldError {
	d := m.Declared
	if d == nil {
		return nil
	}
	var prefix, file string
	var doc *Document
	if d.File == "" {
		prefix = "facts"
		doc = &Document{data: data, pos: pos, fix: factsFix, prefix: prefix}
		if d.raw != nil && !bytes.Equal(bytes.TrimSpace(d.raw), []byte("null")) {
			err := jsonv2.Unmarshal(d.raw, &d.Rows, jsonv2.RejectUnknownMembers(true))
			if fe := doc.decodeProblem(err); fe != nil {
				errs.errs = append(errs.errs, *fe)
				return nil
			}
		}
	} else {
		var fe *FieldError
		if doc, fe = readFactsFile(m, checkFiles); fe != nil {
			errs.errs = append(errs.errs, *fe)
			return nil
		}
		file = d.File
		if err := strictDecode(doc, &d.Rows); err != nil {
			errs.errs = append(errs.errs, err...)
			return nil
		}
	}
	merged, probs := errs.facts().Declare(d.Rows)
	errs.table, errs.jetpacks = merged, nil
	var warnings []FieldError
	for _, p := range probs {
		fe := FieldError{Path: joinPath(prefix, p.Path()), Value: p.Value, Message: p.Message, Fix: p.Fix}
		if file != "" {
			fe = placed(fe, doc) // in the facts file; the matrix's are placed with the matrix's
			fe.File = file
		}
		if p.Redundant {
			warnings = append(warnings, fe)
		} else {
			errs.errs = append(errs.errs, fe)
		}
	}
	return warnings
}

// placed returns fe with the line and column of its path in doc.
func placed(fe FieldError, doc *Document) FieldError {
	errs := []FieldError{fe}
	placeAll(errs, doc.pos, doc.data)
	return errs[0]
}

// readFactsFile reads the facts file the matrix names, inside its
// repository, as a Document of its own.
func readFactsFile(m *Matrix, checkFiles bool) (*Document, *FieldError) {
	name := m.Declared.File
	at := func(message, fix string) *FieldError {
		return &FieldError{Path: "facts", Value: quote(name), Message: message, Fix: fix}
	}
	if !checkFiles && m.Dir == "" {
		return nil, at("names a file, and this matrix was not read from a file", "declare the rows in the matrix under facts, or load the matrix from its file")
	}
	p := m.LocalPath(name)
	if out := m.Inside(name); out != "" {
		return nil, at("facts file "+out, allowFix(resolveExisting(p), nil))
	}
	data, err := inputfile.Read(p, "facts file")
	if errors.Is(err, os.ErrNotExist) {
		return nil, at("facts file "+p+" does not exist", "write it ('jetbake facts --format json' prints rows to copy), or correct the path: it is relative to the matrix file's folder")
	}
	if err != nil {
		return nil, at(err.Error(), "make it a readable JSON file")
	}
	pos, syntax := scanDocument(data)
	doc := &Document{file: name, data: data, pos: pos, fix: factsFix}
	if syntax != nil {
		syntax.File = name
		return nil, syntax
	}
	return doc, nil
}

// strictDecode decodes a facts file into rows, refusing unknown members.
func strictDecode(doc *Document, rows *computecap.Facts) []FieldError {
	err := jsonv2.Unmarshal(doc.data, rows, jsonv2.RejectUnknownMembers(true))
	if fe := doc.decodeProblem(err); fe != nil {
		fe.File = doc.file
		return []FieldError{*fe}
	}
	return nil
}

// decodeProblem turns a decoding error into a FieldError at its place;
// nil for no error.
func (d *Document) decodeProblem(err error) *FieldError {
	if err == nil {
		return nil
	}
	var serr *jsonv2.SemanticError
	if errors.As(err, &serr) {
		fe := d.semantic(serr)
		if serr.Err != nil && !errors.Is(serr.Err, jsonv2.ErrUnknownName) && fe.Message != "unknown field" {
			fe.Message, fe.Value = serr.Err.Error(), d.rawAt(fe.Path)
		}
		return &fe
	}
	path := "$"
	if d.prefix != "" {
		path = d.prefix
	}
	fe := placed(FieldError{Path: path, Message: err.Error(), Fix: d.fix}, d)
	return &fe
}

// DeclaredFactsOf names the declared rows release r rests on, such as
// "JetPack 7.3"; none when it rests on jetbake's table alone.
func (m *Matrix) DeclaredFactsOf(r *Release) []string {
	t := m.Facts()
	if t.Declared.Empty() {
		return nil
	}
	var out []string
	if t.DeclaredJetPack(r.JetPack) {
		out = append(out, "JetPack "+r.JetPack)
	}
	for _, c := range r.Targets {
		if t.DeclaredSM(c) {
			out = append(out, "SM "+c.String())
		}
	}
	for _, ref := range []string{r.BuildBase, r.RuntimeBase, r.Base} {
		if ref != "" && t.DeclaredBase(ref) {
			out = append(out, ref)
		}
	}
	return out
}

// FactsNote is the note that says a release rests on declared facts, for
// validate and plan: "rests on declared facts (JetPack 7.3, in
// jetson-facts.json)"; "" when it does not.
func (m *Matrix) FactsNote(r *Release) string {
	names := m.DeclaredFactsOf(r)
	if len(names) == 0 {
		return ""
	}
	where := "in the matrix"
	if m.Declared != nil && m.Declared.File != "" {
		where = "in " + m.Declared.File
	}
	return "rests on declared facts (" + strings.Join(names, ", ") + ", " + where + ")"
}

// checkDeclaredTiers warns of a release on declared facts that claims a
// tier above candidate: only evidence from a real Jetson can back it.
func checkDeclaredTiers(m *Matrix) []FieldError {
	var out []FieldError
	for i := range m.Releases {
		r := &m.Releases[i]
		if r.Tier != "supported" {
			continue
		}
		if note := m.FactsNote(r); note != "" {
			out = append(out, FieldError{Path: indexPath("releases", i) + ".tier", Value: quote(r.Tier),
				Message: "release " + r.Name + " " + note + ": only evidence from a real Jetson can back supported",
				Fix:     `set the tier to "candidate" until 'jetbake validate --strict' finds that evidence ('jetbake evidence add')`})
		}
	}
	return out
}

// nameFactsFile writes the facts file of each problem as a path beside
// the matrix file at matrixPath, as the user names the matrix.
func nameFactsFile(matrixPath string, errs []FieldError) {
	for i := range errs {
		if f := errs[i].File; f != "" && !filepath.IsAbs(f) {
			errs[i].File = filepath.Join(filepath.Dir(matrixPath), f)
		}
	}
}
