package matrix

import (
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/computecap"
)

// LoadFacts reads a facts file on its own, the file a matrix's "facts"
// names (rows as 'jetbake facts --format json' prints them), for the
// commands that read a host rather than a matrix (doctor): it returns
// jetbake's table with the rows declared, checked by the rules a matrix's
// declared rows pass, and the warnings (a row the table now holds). A file
// that cannot be read is an *inputfile.Error; a row that breaks a rule, or
// a document that is not rows, a *ValidationError naming the file, line
// and field.
func LoadFacts(path string) (*computecap.Table, []FieldError, error) {
	data, err := inputfile.Read(path, "facts file")
	if err != nil {
		return nil, nil, err
	}
	invalid := func(errs []FieldError) error { return &ValidationError{File: path, Errors: errs} }
	pos, syntax := scanDocument(data)
	if syntax != nil {
		return nil, nil, invalid([]FieldError{*syntax})
	}
	doc := &Document{file: path, data: data, pos: pos, fix: factsFix}
	var rows computecap.Facts
	if errs := strictDecode(doc, &rows); errs != nil {
		return nil, nil, invalid(errs)
	}
	t, probs := computecap.DefaultTable().Declare(rows)
	var errs, warnings []FieldError
	for _, p := range probs {
		fe := placed(FieldError{Path: p.Path(), Value: p.Value, Message: p.Message, Fix: p.Fix}, doc)
		fe.File = path
		if p.Redundant {
			warnings = append(warnings, fe)
		} else {
			errs = append(errs, fe)
		}
	}
	if len(errs) > 0 {
		return nil, warnings, invalid(errs)
	}
	return t, warnings, nil
}
