// Package imagespec defines /etc/jetbake/image.json, the description of an
// image that the builder writes and the entrypoint reads at start-up.
//
// It imports only the standard library so that the entrypoint stays small.
package imagespec

import (
	"encoding/json"
	"errors"
	"path"
	"strconv"

	"github.com/jetbake/jetbake/computecap"
)

// Path is where the builder places the description inside every image.
const Path = "/etc/jetbake/image.json"

// BinaryDir is the folder of the router binaries in every image: each
// target's path is a file directly in it.
const BinaryDir = "/usr/local/bin"

// SchemaVersion is the version of a router's description: the builder
// writes it for routers, and every entrypoint reads it.
const SchemaVersion = 1

// SchemaVersionApp is the first version with kind "app", which the builder
// writes for apps. An entrypoint reads every version up to it, so an older
// description stays readable; an older entrypoint refuses an app's.
const SchemaVersionApp = 2

// The kinds of image: a router's binaries compiled per SM ("" in a
// description), or an app on a framework container.
const (
	KindRouter = ""
	KindApp    = "app"
)

// Description describes one built image: which router it holds, for which GPUs, and
// which release of the JetPack family it belongs to.
type Description struct {
	// SchemaVersion is SchemaVersion (a router's) or SchemaVersionApp (an
	// app's) when the builder wrote the file.
	SchemaVersion int `json:"schema_version"`
	// Kind is KindRouter ("") or KindApp.
	Kind string `json:"kind,omitempty"`
	// Router is the program's name as messages write it: the router's
	// binary name, e.g. "text-embeddings-router", or an app's name.
	Router string `json:"router"`
	// Command is what the entrypoint execs for an app, an absolute path
	// first, before the user's arguments; every target's path is its first
	// element. Routers leave it empty.
	Command []string `json:"command,omitempty"`
	// Check names the app check the probe runs on a Jetson: "pytorch" for
	// a PyTorch app; routers leave it empty.
	Check string `json:"check,omitempty"`
	// Version is the router's version, e.g. "1.8.2".
	Version string `json:"version,omitempty"`
	// Release is the matrix release name, e.g. "jetpack6.2".
	Release string `json:"release"`
	// JetPack is the JetPack version of the image, e.g. "6.2".
	JetPack string `json:"jetpack"`
	// L4T is the Jetson Linux version of the image, e.g. "36.4.3".
	L4T string `json:"l4t"`
	// CUDA is the CUDA version of the image, e.g. "12.6".
	CUDA string `json:"cuda"`
	// Revision is the source revision (git commit) the image was built from.
	Revision string `json:"revision,omitempty"`
	// Tags are the full references the image is published under.
	Tags []string `json:"tags,omitempty"`
	// Digest is the digest the image is published under, such as
	// "sha256:3f2a...". jetbake build never writes it, since an image cannot
	// hold its own digest; a pipeline that derives an image from a published
	// one may. The probe (jetbake-probe) reports it, or the
	// JETBAKE_IMAGE_DIGEST variable, which wins.
	Digest string `json:"digest,omitempty"`
	// Targets are the router binaries in the image, one per SM target.
	Targets []Target `json:"targets"`
	// Smoke is the argument list the router runs for a smoke test, e.g. ["--version"].
	Smoke []string `json:"smoke,omitempty"`
	// Family lists every release of the same matrix, this one included, so
	// that a failure can name the image that would work.
	Family []Sibling `json:"family,omitempty"`
	// Facts are the Jetson facts the matrix declared, when the release
	// rests on them (a JetPack release newer than the jetbake that built
	// the image): the entrypoint decides with its table and these rows,
	// its own rows winning (computecap.Table.Declare).
	Facts *computecap.Facts `json:"facts,omitempty"`
}

// Target is one router binary compiled for one SM, or one GPU an app's
// image must run on.
type Target struct {
	// SM is the compute capability it was compiled for, as "8.7".
	SM string `json:"sm"`
	// Path is the absolute path of the binary in the image, e.g.
	// "/usr/local/bin/router-87"; an app's command's first element.
	Path string `json:"path"`
}

// Sibling is another release of the same matrix.
type Sibling struct {
	// Release is the matrix release name.
	Release string `json:"release"`
	// JetPack is its JetPack version, e.g. "7.2".
	JetPack string `json:"jetpack"`
	// L4T is its Jetson Linux version, e.g. "39.2.0".
	L4T string `json:"l4t"`
	// Targets are its SM targets, as "8.7".
	Targets []string `json:"targets"`
	// Tags are its full references.
	Tags []string `json:"tags,omitempty"`
	// Tier is its support tier.
	Tier string `json:"tier,omitempty"`
}

// Parse decodes a description and checks that it can be used. A problem
// is an *Error naming the line and column, the field, the value and the
// fix.
func Parse(data []byte) (*Description, error) {
	var img Description
	if err := json.Unmarshal(data, &img); err != nil {
		return nil, decodeError(data, err)
	}
	if err := img.Validate(); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Place(data)
		}
		return nil, err
	}
	return &img, nil
}

// rebuildFix is the fix of a description jetbake would not have written.
const rebuildFix = "rebuild the image with 'jetbake build', which writes this file"

// Validate reports the first field that makes the description unusable,
// as an *Error without a line and column.
func (img *Description) Validate() error {
	switch {
	case img.SchemaVersion < SchemaVersion || img.SchemaVersion > SchemaVersionApp:
		return &Error{Field: "schema_version", Value: strconv.Itoa(img.SchemaVersion),
			Message: "this entrypoint reads schema " + strconv.Itoa(SchemaVersion) + " to " + strconv.Itoa(SchemaVersionApp),
			Fix:     rebuildFix + " with a matching jetbake"}
	case img.Kind == KindApp:
		return img.validateApp()
	case img.Kind != KindRouter:
		return &Error{Field: "kind", Value: computecap.QuoteShort(img.Kind),
			Message: "is not a kind this entrypoint knows (a router's, or \"app\")", Fix: rebuildFix + " with a matching jetbake"}
	case img.Router == "":
		return &Error{Field: "router", Message: "is empty", Fix: rebuildFix}
	case len(img.Targets) == 0:
		return &Error{Field: "targets", Message: "is empty: the image holds no router binary", Fix: rebuildFix}
	}
	for i, t := range img.Targets {
		field := "targets[" + strconv.Itoa(i) + "]"
		switch {
		case t.SM == "" || t.Path == "":
			return &Error{Field: field, Message: "needs both sm and path", Fix: rebuildFix}
		case !InBinaryDir(t.Path):
			return &Error{Field: field + ".path", Value: computecap.QuoteShort(t.Path),
				Message: "is not a clean path of a file in " + BinaryDir + ": the entrypoint runs only the image's own router binaries",
				Fix:     rebuildFix}
		}
	}
	return nil
}

// InBinaryDir reports whether p is a clean absolute path of a file directly
// in BinaryDir, such as "/usr/local/bin/router-87": no ".", "..", "//" or
// trailing "/" that could lead elsewhere.
func InBinaryDir(p string) bool {
	return path.Clean(p) == p && path.Dir(p) == BinaryDir
}

// validateApp checks an app's description: schema SchemaVersionApp, its
// name, a command that starts with a clean absolute path, and targets
// whose path is that command's.
func (img *Description) validateApp() error {
	switch {
	case img.SchemaVersion < SchemaVersionApp:
		return &Error{Field: "kind", Value: computecap.QuoteShort(img.Kind),
			Message: "needs schema_version " + strconv.Itoa(SchemaVersionApp), Fix: rebuildFix}
	case img.Router == "":
		return &Error{Field: "router", Message: "is empty: it holds the app's name", Fix: rebuildFix}
	case len(img.Command) == 0 || !cleanAbs(img.Command[0]):
		return &Error{Field: "command", Message: "does not start with a clean absolute path: the entrypoint execs exactly that file", Fix: rebuildFix}
	case len(img.Targets) == 0:
		return &Error{Field: "targets", Message: "is empty: the image names no GPU it runs on", Fix: rebuildFix}
	}
	for i, t := range img.Targets {
		if t.SM == "" || t.Path != img.Command[0] {
			return &Error{Field: "targets[" + strconv.Itoa(i) + "]", Value: computecap.QuoteShort(t.Path),
				Message: "needs an sm and the command's path " + computecap.QuoteShort(img.Command[0]), Fix: rebuildFix}
		}
	}
	return nil
}

// cleanAbs reports whether p is a clean absolute path of a file.
func cleanAbs(p string) bool {
	return p != "/" && path.IsAbs(p) && path.Clean(p) == p
}

// Argv is what the entrypoint execs for the target at path choice with the
// user's arguments: a router's binary, or an app's command, then args.
func (img *Description) Argv(choice string, args []string) []string {
	head := []string{choice}
	if img.Kind == KindApp {
		head = img.Command
	}
	argv := make([]string, 0, len(head)+len(args))
	return append(append(argv, head...), args...)
}
