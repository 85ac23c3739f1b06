package evidence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
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

// Add writes admitted evidence to the store and returns its path.
// Evidence of the same image, device and day replaces what is there unless
// that is newer.
//
// The store is opened with os.Root at its parent folder (the matrix's):
// no link leads a read or a write out of it, and evidence/ or a release's
// folder that is a link elsewhere is refused. The file is written to a
// temporary file beside it and renamed, so that a reader never sees half a
// file. Folders are created only for evidence that will be written, and
// removed again when the write fails.
func (s Store) Add(a *Admitted) (string, error) {
	name := FileName(a.Evidence)
	if err := checkStoreName(a.Release.Name, name); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(filepath.Dir(s.Dir))
	if err != nil {
		return "", fmt.Errorf("evidence store: %w", err)
	}
	defer root.Close()
	dir := filepath.Join(filepath.Base(s.Dir), a.Release.Name)
	rel := filepath.Join(dir, name)
	path := filepath.Join(s.Dir, a.Release.Name, name)
	if old, err := readEntryIn(root, rel, path); err == nil && old.At().After(a.Evidence.At()) {
		return path, fmt.Errorf("%s holds newer evidence (%s) for the same image, device and day: nothing written",
			path, old.GeneratedAt)
	}
	data, err := a.Evidence.Marshal()
	if err != nil {
		return "", err
	}
	created, err := mkdirs(root, dir)
	if err != nil {
		return "", s.storeError(err)
	}
	if err := writeIn(root, rel, data); err != nil {
		for i := len(created) - 1; i >= 0; i-- {
			_ = root.Remove(created[i])
		}
		return "", s.storeError(err)
	}
	return path, nil
}

// checkStoreName refuses a release or file name that cannot be a file
// name of the store, before anything is created.
func checkStoreName(release, file string) error {
	for _, n := range []string{release, file} {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\\\x00") || len(n) > 255 {
			return fmt.Errorf("evidence store: %s cannot be a file name: nothing written", computecap.QuoteShort(n))
		}
	}
	return nil
}

// mkdirs creates dir and its missing parents in root and returns those it
// created, outermost first.
func mkdirs(root *os.Root, dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if _, err := root.Lstat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
	}
	var created []string
	for _, d := range missing {
		if err := root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return created, err
		}
		created = append(created, d)
	}
	// A folder on the way that is a link out of the root fails here.
	if _, err := root.Stat(dir); err != nil {
		return created, err
	}
	return created, nil
}

// writeIn writes data to name in root through a temporary file in the same
// folder, synced, and a rename.
func writeIn(root *os.Root, name string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+"."+strconv.FormatInt(time.Now().UnixNano(), 36)+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer root.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return root.Rename(tmp, name)
}

// storeError says why the store could not be written, naming the store,
// never the temporary file.
func (s Store) storeError(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes from parent"):
		return fmt.Errorf("evidence store: %s leads out of %s through a link: the store follows no link out of the matrix's folder; replace the link with a folder",
			filepath.Join(filepath.Dir(s.Dir), pe.Path), filepath.Dir(s.Dir))
	case errors.As(err, &pe):
		return fmt.Errorf("evidence store: %s: %v", filepath.Join(filepath.Dir(s.Dir), pe.Path), pe.Err)
	case errors.As(err, &le):
		return fmt.Errorf("evidence store: %s: %v", filepath.Join(filepath.Dir(s.Dir), le.New), le.Err)
	}
	return fmt.Errorf("evidence store: %w", err)
}

// Release returns the evidence stored for a release, newest first. A
// release without a folder has none. A file that does not parse is an
// error naming it: the store holds only what Add wrote. No link leads the
// read out of the matrix's folder (os.Root).
func (s Store) Release(name string) ([]Entry, error) {
	root, err := os.OpenRoot(filepath.Dir(s.Dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("evidence store: %w", err)
	}
	defer root.Close()
	dir := filepath.Join(filepath.Base(s.Dir), name)
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, s.storeError(err)
	}
	files, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("evidence store: %w", err)
	}
	var out []Entry
	for _, fi := range files {
		if fi.IsDir() || !strings.HasSuffix(fi.Name(), ".json") || strings.HasPrefix(fi.Name(), ".") {
			continue
		}
		path := filepath.Join(s.Dir, name, fi.Name())
		ev, err := readEntryIn(root, filepath.Join(dir, fi.Name()), path)
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

// readEntryIn reads and parses the stored file name in root; path names it
// in messages.
func readEntryIn(root *os.Root, name, path string) (*Evidence, error) {
	data, err := inputfile.ReadIn(root, name, path, "evidence file")
	if err != nil {
		return nil, fmt.Errorf("evidence store: %w", err)
	}
	ev, err := ParseFile(path, data)
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
	return ParseFile(path, data)
}
