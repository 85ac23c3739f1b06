// Package verdicts remembers a release's passing smoke run and build-time
// audit, keyed by exactly what they depend on (Inputs), so that a build
// whose routers, runtime image, smoke run and jetbake are the same as an
// earlier one's runs neither again. Only passing verdicts are kept: a
// refusal is always found anew, with its own words. Each verdict is one
// small JSON file named by its key in the store's folder, written
// atomically; a file that is corrupt, too large, of another format or
// whose key is not its name's is ignored with a warning, never trusted.
package verdicts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/inputfile"
)

// format changes when what a key covers or an entry holds does: entries
// of another format are never read as this one's.
const format = 3

// maxEntry bounds an entry's file: a release's binaries, their resolved
// libraries and the audit's files, a few KiB.
const maxEntry = 1 << 20

// DefaultDir is the store's folder in the user's cache folder, beside the
// app lane's base reads: <user cache dir>/jetbake/verdicts (on Linux
// $XDG_CACHE_HOME/jetbake/verdicts, else ~/.cache/jetbake/verdicts); ""
// when the user has no cache folder.
func DefaultDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "jetbake", "verdicts")
}

// Inputs are what a release's smoke run and audit depend on.
type Inputs struct {
	// Tool is jetbake's identity: its version and commit, and for a build
	// of a modified checkout what tells its binary from another's.
	Tool string `json:"tool"`
	// CUDA is the release's CUDA version, which the audit judges for.
	CUDA string `json:"cuda"`
	// Targets are the release's SM targets in order, each with its
	// router binary's path in the image and content digest (Digests).
	Targets []Target `json:"targets"`
	// Runtime is the runtime base the routers run on, pinned by digest;
	// RuntimeStage the digest of the runtime stage's LLB definition
	// (Runtime) and RuntimeFiles of its own files (Digests), both empty
	// without a stage; RuntimeConfig the digest of the runtime image's
	// config. A runtime stage rebuilt after a prune with other bytes has
	// another key, and so does one with other steps.
	Runtime       string `json:"runtime"`
	RuntimeStage  string `json:"runtime_stage,omitempty"`
	RuntimeFiles  string `json:"runtime_files,omitempty"`
	RuntimeConfig string `json:"runtime_config"`
	// BuildBase is the build base pinned by digest: it lends the smoke
	// run its driver stub, except on the cross path, where the cross build
	// base does (the smoke spec names it, and the routers were compiled in
	// it).
	BuildBase string `json:"build_base"`
	// Smoke is the smoke run's spec as JSON (arguments, environment,
	// paths, what it checks); empty when the router has none.
	Smoke json.RawMessage `json:"smoke,omitempty"`
}

// Target is one SM target's part of Inputs.
type Target struct {
	SM     string `json:"sm"`
	Path   string `json:"path"`
	Router string `json:"router"` // "sha256:..." of the binary's bytes
}

// Key is the sha256 of the inputs, in hex: the entry's file name.
func (in Inputs) Key() string {
	data, err := json.Marshal(struct {
		Format int    `json:"format"`
		Inputs Inputs `json:"inputs"`
	}{format, in})
	if err != nil {
		// Every field marshals; Smoke is produced by json.Marshal.
		panic(fmt.Sprintf("verdicts: marshal inputs: %v", err))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Verdict is what a passing release remembers: when, and what the build
// would otherwise have read (the caller's JSON).
type Verdict struct {
	Format int             `json:"format"`
	Key    string          `json:"key"`
	At     time.Time       `json:"at"`
	Data   json.RawMessage `json:"data"`
}

// Short is the key's first 12 digits, as the progress shows it.
func (v *Verdict) Short() string { return v.Key[:min(12, len(v.Key))] }

// Store is the folder verdicts are kept in; a Store with no folder keeps
// nothing.
type Store struct{ Dir string }

// file is where key's verdict is kept; "" for a key that is not one.
func (s Store) file(key string) string {
	if s.Dir == "" || len(key) != sha256.Size*2 || strings.Trim(key, "0123456789abcdef") != "" {
		return ""
	}
	return filepath.Join(s.Dir, key+".json")
}

// Load returns the verdict kept under key: nil without one. warn is set
// when an entry was there but could not be trusted (and was ignored).
func (s Store) Load(key string) (v *Verdict, warn error) {
	file := s.file(key)
	if file == "" {
		return nil, nil
	}
	data, err := inputfile.Read(file, "remembered verdict", inputfile.WithLimit(maxEntry))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ignoring the remembered verdict %s: %w", file, err)
	}
	var got Verdict
	switch err := json.Unmarshal(data, &got); {
	case err != nil:
		return nil, fmt.Errorf("ignoring the remembered verdict %s: it is not valid JSON (%v); the smoke run and the audit run again", file, err)
	case got.Format != format:
		return nil, fmt.Errorf("ignoring the remembered verdict %s: it is of format %d, this jetbake writes %d; the smoke run and the audit run again", file, got.Format, format)
	case got.Key != key:
		return nil, fmt.Errorf("ignoring the remembered verdict %s: it holds the verdict of key %.12s, not of its name; the smoke run and the audit run again", file, got.Key)
	case len(got.Data) == 0 || got.At.IsZero():
		return nil, fmt.Errorf("ignoring the remembered verdict %s: it lacks its time or its data; the smoke run and the audit run again", file)
	}
	return &got, nil
}

// Save keeps data as key's passing verdict, atomically. A failure costs
// only the next build a smoke run: the caller warns and goes on.
func (s Store) Save(key string, data json.RawMessage, at time.Time) error {
	file := s.file(key)
	if file == "" {
		return nil
	}
	out, err := json.Marshal(Verdict{Format: format, Key: key, At: at.UTC().Round(time.Second), Data: data})
	if err != nil {
		return err
	}
	if len(out) > maxEntry {
		return fmt.Errorf("the verdict of key %.12s is %d bytes, over the store's bound of %d: not remembered", key, len(out), maxEntry)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("remember the verdict: %w", err)
	}
	return inputfile.WriteFile(file, out, 0o644)
}

// Clear forgets every verdict kept in dir (removes the folder); a folder
// that does not exist is already clear. The bench's cold rounds call it.
func Clear(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear the remembered verdicts in %s: %w", dir, err)
	}
	return nil
}
