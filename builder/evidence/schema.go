package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// SchemaVersion is the version of the evidence this package reads.
const SchemaVersion = 1

// MaxSize is the largest evidence file Parse reads; the probe writes about 3 KB.
const MaxSize = 64 << 10

// Status is the outcome of one check of the probe.
type Status string

// Statuses of a check.
const (
	// Passed: the check held.
	Passed Status = "passed"
	// Failed: the check did not hold.
	Failed Status = "failed"
	// Skipped: the check could not run, which proves nothing.
	Skipped Status = "skipped"
)

// Evidence is what `jetbake-entrypoint --probe` writes: an allow-listed
// profile of the image and the host, and the result. Parse refuses any
// other field.
type Evidence struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// GeneratedAt is when the probe ran, in RFC 3339 form.
	GeneratedAt string `json:"generated_at"`
	// Image names the image the probe ran in.
	Image Image `json:"image"`
	// Revision is the jetbake source revision the image was built from.
	Revision string `json:"revision,omitempty"`
	// Host is the host's profile.
	Host Host `json:"host"`
	// Result is the chosen binary, the checks and the smoke run.
	Result Result `json:"result"`

	at time.Time
}

// Image names the image the probe ran in.
type Image struct {
	// Release is the matrix release name from the image's description.
	Release string `json:"release,omitempty"`
	// Tags are the references from the image's description.
	Tags []string `json:"tags"`
	// Digest is the image's digest, such as "sha256:c2ef...".
	Digest string `json:"digest,omitempty"`
	// DigestSource says where the probe read the digest:
	// "JETBAKE_IMAGE_DIGEST" or "image.json".
	DigestSource string `json:"digest_source,omitempty"`
}

// Host is the host's profile, as the probe derived it.
type Host struct {
	// Architecture is the entrypoint's architecture, "arm64" on a Jetson.
	Architecture string `json:"architecture"`
	// L4T is the Jetson Linux release, such as "36.4.3".
	L4T string `json:"l4t,omitempty"`
	// JetPack is the JetPack derived from L4T, such as "6.2".
	JetPack string `json:"jetpack,omitempty"`
	// DeviceClass is the module, such as "Jetson AGX Orin".
	DeviceClass string `json:"device_class,omitempty"`
	// SoC is the device-tree name of the SoC, such as "tegra234".
	SoC string `json:"soc,omitempty"`
	// ComputeCapability is the GPU's, such as "8.7".
	ComputeCapability string `json:"compute_capability,omitempty"`
	// CUDADriver is the CUDA version of the driver, such as "12.6".
	CUDADriver string `json:"cuda_driver,omitempty"`
}

// Result is what the probe found.
type Result struct {
	// Pass is true when every check passed.
	Pass bool `json:"pass"`
	// Binary is the router binary that would be chosen, when one would.
	Binary *Binary `json:"binary,omitempty"`
	// Checks are the probe's checks, in order.
	Checks []Check `json:"checks"`
	// Smoke is the smoke run, when --smoke ran it.
	Smoke *Smoke `json:"smoke,omitempty"`
}

// Binary is the router binary that would be chosen.
type Binary struct {
	// SM is the compute capability it was built for, such as "8.7".
	SM string `json:"sm"`
	// Name is its file name, such as "router-87".
	Name string `json:"name,omitempty"`
}

// Check is one named check of the probe.
type Check struct {
	// Name names the check, such as "cuda-driver".
	Name string `json:"name"`
	// Status is passed, failed or skipped.
	Status Status `json:"status"`
	// Detail says what was found.
	Detail string `json:"detail"`
}

// Smoke is the smoke run of the chosen binary.
type Smoke struct {
	// Args are the router's arguments, such as ["--version"].
	Args []string `json:"args,omitempty"`
	// ExitCode is the router's exit status, when it ran to an end.
	ExitCode *int `json:"exit_code,omitempty"`
}

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
		if len(value) > 80 {
			value = value[:80] + "..."
		}
		v = strconv.Quote(value)
	}
	return &SchemaError{Path: path, Value: v, Message: msg}
}

// Parse reads evidence: one JSON object of at most MaxSize bytes with the
// fields of Evidence and no others, each of the form the probe writes (see
// Validate). A result that is not a pass still parses: it is refused by
// Admit, not here, so that it can be reported.
func Parse(data []byte) (*Evidence, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("evidence is %d bytes, more than the %d the probe writes: is this the probe's output?", len(data), MaxSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var ev Evidence
	if err := dec.Decode(&ev); err != nil {
		return nil, fmt.Errorf("evidence is not the probe's JSON (schema %d): %w", SchemaVersion, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("evidence has more after its JSON object: give one probe output per file")
	}
	if err := ev.Validate(); err != nil {
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
