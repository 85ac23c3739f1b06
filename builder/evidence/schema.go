package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// SchemaVersion is the version of the evidence this package reads.
const SchemaVersion = evidencespec.SchemaVersion

// MaxSize is the largest evidence file Parse reads; the probe writes about 3 KB.
const MaxSize = 64 << 10

// Status is the outcome of one check of the probe.
type Status = evidencespec.Status

// Statuses of a check.
const (
	// Passed: the check held.
	Passed = evidencespec.Passed
	// Failed: the check did not hold.
	Failed = evidencespec.Failed
	// Skipped: the check could not run, which proves nothing.
	Skipped = evidencespec.Skipped
)

// Evidence is what `jetbake-probe` writes: an allow-listed
// profile of the image and the host, and the result, in the types of
// package evidencespec that the probe writes with. Parse refuses any other
// field. The embedded document's fields are promoted, so ev.Host and
// ev.Result read as they do on evidencespec.Evidence, and the JSON is the
// probe's byte for byte.
type Evidence struct {
	evidencespec.Evidence

	at time.Time
}

// Host is the host's profile, as the probe derived it.
type Host = evidencespec.Host

// Result is what the probe found.
type Result = evidencespec.Result

// Binary is the router binary that would be chosen.
type Binary = evidencespec.Binary

// Check is one named check of the probe.
type Check = evidencespec.Check

// Smoke is the smoke run of the chosen binary.
type Smoke = evidencespec.Smoke

// SchemaError names the field of the evidence that breaks the schema.
type SchemaError struct {
	// Path is the field's JSON path, such as "host.l4t".
	Path string
	// Value is the offending value, quoted, or empty when it is missing.
	Value string
	// Message says what is wrong and what is expected.
	Message string
}

// Error writes `host.l4t: "R36": is not an L4T release such as 36.4.3`.
func (e *SchemaError) Error() string {
	if e.Value == "" {
		return "evidence " + e.Path + ": " + e.Message
	}
	return "evidence " + e.Path + ": " + e.Value + ": " + e.Message
}

// schemaErr builds a *SchemaError for value at path.
func schemaErr(path, value, msg string) error {
	v := ""
	if value != "" {
		v = computecap.QuoteShort(value)
	}
	return &SchemaError{Path: path, Value: v, Message: msg}
}

// Parse reads evidence: one JSON object of at most MaxSize bytes with the
// fields of Evidence and no others, each of the form the probe writes (see
// Validate). A result that is not a pass still parses: it is refused by
// Admit, not here, so that it can be reported.
func Parse(data []byte) (*Evidence, error) { return ParseFile("evidence", data) }

// unprobedFix is the fix of evidence that is not what the probe writes.
const unprobedFix = "give the file the probe wrote, unedited"

// ParseFile is Parse for the content of file. A problem is a
// *matrix.FileError naming the file, the line and column, the field, the
// value and the fix, as the matrix's errors do.
func ParseFile(file string, data []byte) (*Evidence, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("evidence is %d bytes, more than the %d the probe writes: is this the probe's output?", len(data), MaxSize)
	}
	var ev Evidence
	doc, err := matrix.DecodeFile(file, data, &ev, unprobedFix)
	if err != nil {
		return nil, err
	}
	if err := ev.Validate(); err != nil {
		var se *SchemaError
		if errors.As(err, &se) {
			return nil, doc.Problem(se.Path, se.Value, se.Message, "")
		}
		return nil, err
	}
	return &ev, nil
}

// At returns when the probe ran; the zero time before Validate succeeded.
func (ev *Evidence) At() time.Time { return ev.at }

// Marshal writes the evidence as indented JSON with a final newline.
func (ev *Evidence) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write evidence: %w", err)
	}
	return append(data, '\n'), nil
}
