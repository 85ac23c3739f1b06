// Package localoutput writes a build's images locally, besides or instead
// of a push, as buildx's --output does: an OCI layout folder or a tarball
// that `docker load` takes per release, written under a temporary name and
// moved into place only when the build's rules allow it, never over a
// folder that is not an OCI layout.
package localoutput

import (
	"fmt"
	"path/filepath"
	"strings"
)

// PartialSuffix marks a local output that is still being written; it is
// renamed into place by Place.
const PartialSuffix = ".jetbake-partial"

// Output is a local destination for every built image, besides or instead of a push.
type Output struct {
	// Type is "oci" (an OCI layout folder per release) or "docker" (a tarball per release that `docker load` takes).
	Type string
	// Dest is the folder (oci) or file (docker). With several releases, each
	// gets DEST/<release> (oci) or DEST-<release>.tar (docker).
	Dest string
}

// Parse parses an output as buildx writes one: `type=oci,dest=DIR`
// or `type=docker,dest=FILE`. What it cannot read is an *Error.
func Parse(v string) (Output, error) {
	var out Output
	for _, field := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(field, "=")
		switch k {
		case "type":
			out.Type = val
		case "dest":
			out.Dest = val
		default:
			return Output{}, &Error{Value: v, Problem: fmt.Sprintf("unknown key %q (want type=oci|docker,dest=PATH)", k)}
		}
	}
	if out.Type != "oci" && out.Type != "docker" {
		return Output{}, &Error{Value: v, Problem: "type must be oci or docker", NotLocal: true}
	}
	if out.Dest != "" {
		out.Dest = filepath.Clean(out.Dest)
	}
	if out.Dest == "" || out.Dest == "." || out.Dest == "/" || strings.HasSuffix(out.Dest, PartialSuffix) {
		return Output{}, &Error{Value: v, Problem: fmt.Sprintf("dest is missing, e.g. type=%s,dest=out", out.Type)}
	}
	return out, nil
}

// CheckTypes refuses two outputs of one type (an *Error, Repeated).
func CheckTypes(outs []Output) error {
	seen := map[string]bool{}
	for _, out := range outs {
		if seen[out.Type] {
			return &Error{Value: "type=" + out.Type, Problem: "is given twice: one of each type at most", Repeated: true}
		}
		seen[out.Type] = true
	}
	return nil
}

// Error is a local output that Parse cannot read, or a type given twice.
type Error struct {
	// Value is the output as given to Parse, or "type=TYPE" when
	// Repeated.
	Value string
	// Problem says what is wrong with it and how to write it.
	Problem string
	// NotLocal is set when the type is none of the local ones: a registry
	// is pushed to (WithPush), not written.
	NotLocal bool
	// Repeated is set when two outputs have the type.
	Repeated bool
}

// Error names the output and the problem.
func (e *Error) Error() string {
	if e.Repeated {
		return fmt.Sprintf("output %s %s", e.Value, e.Problem)
	}
	msg := fmt.Sprintf("output %q: %s", e.Value, e.Problem)
	if e.NotLocal {
		msg += " (push to a registry with WithPush)"
	}
	return msg
}

// Path is where a release's local output goes: DEST itself for a single
// release, DEST/<release> (oci) or DEST-<release>.tar (docker) for several.
func Path(out Output, release string, multi bool) string {
	if !multi {
		return out.Dest
	}
	if out.Type == "oci" {
		return filepath.Join(out.Dest, release)
	}
	ext := filepath.Ext(out.Dest)
	return strings.TrimSuffix(out.Dest, ext) + "-" + release + ".tar"
}
