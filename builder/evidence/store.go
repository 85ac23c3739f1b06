package evidence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
)

// DirName is the store's folder, next to the matrix file.
const DirName = "evidence"

// Store keeps admitted evidence as
// <Dir>/<release>/<digest-short>-<device>-<date>.json.
type Store struct {
	// Dir is the store's folder.
	Dir string
}

// StoreFor returns the store next to the matrix file (evidence/ in its
// folder; the working directory for a matrix from Parse).
func StoreFor(m *matrix.Matrix) Store {
	return Store{Dir: filepath.Join(m.Dir, DirName)}
}

// Entry is one stored piece of evidence.
type Entry struct {
	// Path is the file's path.
	Path string
	// Release is the release folder it is in.
	Release string
	// Evidence is its content.
	Evidence *Evidence
}

// FileName is where evidence goes in its release's folder:
// "c2efadaaded6-jetson-orin-nano-super-2026-11-20.json".
func FileName(ev *Evidence) string {
	short := strings.TrimPrefix(ev.Image.Digest, "sha256:")
	if len(short) > 12 {
		short = short[:12]
	}
	return short + "-" + slug(ev.Host.DeviceClass) + "-" + ev.At().UTC().Format(time.DateOnly) + ".json"
}

// slug writes a device class in lowercase with '-' between words:
// "Jetson Orin (other module)" is "jetson-orin-other-module".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// Add writes admitted evidence to the store, through a temporary file and
// a rename, and returns its path. Evidence of the same image, device and
// day replaces what is there unless that is newer.
func (s Store) Add(a *Admitted) (string, error) {
	dir := filepath.Join(s.Dir, a.Release.Name)
	path := filepath.Join(dir, FileName(a.Evidence))
	if old, err := readEntry(path); err == nil && old.At().After(a.Evidence.At()) {
		return path, fmt.Errorf("%s holds newer evidence (%s) for the same image, device and day: nothing written",
			path, old.GeneratedAt)
	}
	data, err := a.Evidence.Marshal()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("evidence store: %w", err)
	}
	if err := renameio.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("evidence store: write %s: %w", path, err)
	}
	return path, nil
}

// Release returns the evidence stored for a release, newest first. A
// release without a folder has none. A file that does not parse is an
// error naming it: the store holds only what Add wrote.
func (s Store) Release(name string) ([]Entry, error) {
	dir := filepath.Join(s.Dir, name)
	files, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("evidence store: %w", err)
	}
	var out []Entry
	for _, f := range files {
		if f.IsDir() || !strings.HasSuffix(f.Name(), ".json") || strings.HasPrefix(f.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, f.Name())
		ev, err := readEntry(path)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Path: path, Release: name, Evidence: ev})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Evidence.At(), out[j].Evidence.At()
		if !a.Equal(b) {
			return a.After(b)
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// readEntry reads and parses one stored file.
func readEntry(path string) (*Evidence, error) {
	ev, err := ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("evidence store: %w", err)
	}
	return ev, nil
}

// ReadFile reads and parses an evidence file.
func ReadFile(path string) (*Evidence, error) {
	data, err := inputfile.Read(path, "evidence file")
	if err != nil {
		return nil, err
	}
	ev, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ev, nil
}
