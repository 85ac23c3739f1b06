// Package pywheel writes Python distributions as pip writes and reads them,
// for the offline test bed: a wheel (a zip with the package's files and a
// .dist-info folder holding METADATA, WHEEL, entry_points.txt and RECORD,
// PEP 427 and PEP 376), or the same distribution installed in a
// site-packages folder, as pip leaves it (RECORD with every file's hash,
// INSTALLER). pip checks a wheel's RECORD hashes and sizes on install, so
// these are computed, never made up.
package pywheel

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Dist is one Python distribution.
type Dist struct {
	// Name is the project name, e.g. "torch" or "torchy-helper".
	Name string
	// Version is its PEP 440 version, e.g. "2.8.0a0+5228986c39.nv25.06".
	Version string
	// Tag is the wheel's compatibility tag, e.g. "py3-none-any" or
	// "cp311-cp311-manylinux_2_28_aarch64".
	Tag string
	// Summary is METADATA's Summary line.
	Summary string
	// RequiresPython is METADATA's Requires-Python, e.g. ">=3.10".
	RequiresPython string
	// Requires are its Requires-Dist lines, e.g. "torch>=2.0" or
	// `bitsandbytes>=0.45; extra == "quantization"`.
	Requires []string
	// Extras are its Provides-Extra names, e.g. "quantization".
	Extras []string
	// ConsoleScripts are entry points, name to "module:function".
	ConsoleScripts map[string]string
	// Files are the files it installs, by their path in site-packages.
	Files map[string][]byte
}

// validName is PEP 508's project name.
var validName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// separators are the runs PEP 503 and PEP 427 rewrite.
var separators = regexp.MustCompile(`[-_.]+`)

// Normalize is PEP 503's normalized name: lower case, runs of -_. as "-".
func Normalize(name string) string {
	return strings.ToLower(separators.ReplaceAllString(name, "-"))
}

// escaped is the name or version as wheel file names and .dist-info folders
// spell it (PEP 427: "-" becomes "_").
func escaped(s string) string {
	return separators.ReplaceAllString(s, "_")
}

// DistInfo is the .dist-info folder's name, e.g. "torch-2.8.0.dist-info".
func (d Dist) DistInfo() string { return escaped(d.Name) + "-" + d.Version + ".dist-info" }

// Filename is the wheel's file name, e.g. "torch-2.9.0-cp311-cp311-manylinux_2_28_aarch64.whl".
func (d Dist) Filename() string {
	return escaped(d.Name) + "-" + strings.ReplaceAll(d.Version, "-", "_") + "-" + d.Tag + ".whl"
}

func (d Dist) check() error {
	if !validName.MatchString(d.Name) {
		return fmt.Errorf("python distribution name %q: use letters, digits, '-', '_' and '.'", d.Name)
	}
	if d.Version == "" || strings.ContainsAny(d.Version, " /-") {
		return fmt.Errorf("python distribution %s: version %q is not a PEP 440 version such as 1.0.0", d.Name, d.Version)
	}
	if strings.Count(d.Tag, "-") != 2 {
		return fmt.Errorf("python distribution %s: tag %q is not PYTHON-ABI-PLATFORM such as py3-none-any", d.Name, d.Tag)
	}
	return nil
}

// Metadata is the METADATA file (core metadata 2.1).
func (d Dist) Metadata() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n", d.Name, d.Version)
	if d.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", d.Summary)
	}
	if d.RequiresPython != "" {
		fmt.Fprintf(&b, "Requires-Python: %s\n", d.RequiresPython)
	}
	for _, e := range d.Extras {
		fmt.Fprintf(&b, "Provides-Extra: %s\n", e)
	}
	for _, r := range d.Requires {
		fmt.Fprintf(&b, "Requires-Dist: %s\n", r)
	}
	return []byte(b.String())
}

// metaFiles are the .dist-info files other than RECORD and INSTALLER.
func (d Dist) metaFiles() map[string][]byte {
	info := d.DistInfo()
	purelib := "true"
	if !strings.HasSuffix(d.Tag, "-none-any") {
		purelib = "false"
	}
	out := map[string][]byte{
		info + "/METADATA": d.Metadata(),
		info + "/WHEEL": []byte("Wheel-Version: 1.0\nGenerator: jetbake-pywheel\nRoot-Is-Purelib: " + purelib +
			"\nTag: " + d.Tag + "\n"),
	}
	if len(d.ConsoleScripts) > 0 {
		var b strings.Builder
		b.WriteString("[console_scripts]\n")
		for _, n := range sortedKeys(d.ConsoleScripts) {
			fmt.Fprintf(&b, "%s = %s\n", n, d.ConsoleScripts[n])
		}
		out[info+"/entry_points.txt"] = []byte(b.String())
	}
	return out
}

// record is RECORD of files (PEP 376: path,sha256=urlsafe-b64,size), with
// a line for RECORD itself, which has no hash.
func record(files map[string][]byte, self string) []byte {
	var b strings.Builder
	for _, n := range sortedKeys(files) {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(&b, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[n]))
	}
	fmt.Fprintf(&b, "%s,,\n", self)
	return []byte(b.String())
}

// all is the package's files and metadata, without RECORD.
func (d Dist) all() map[string][]byte {
	out := d.metaFiles()
	for n, data := range d.Files {
		out[n] = data
	}
	return out
}

// Wheel writes the wheel: a zip whose RECORD lists every other file.
func (d Dist) Wheel() ([]byte, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	files := d.all()
	self := d.DistInfo() + "/RECORD"
	files[self] = record(files, self)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range sortedKeys(files) {
		h := &zip.FileHeader{Name: n, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Installed is the distribution as pip leaves it in a site-packages folder:
// its files, the .dist-info with INSTALLER ("pip") and a RECORD that lists
// them all, by path relative to site-packages.
func (d Dist) Installed() (map[string][]byte, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	files := d.all()
	files[d.DistInfo()+"/INSTALLER"] = []byte("pip\n")
	self := d.DistInfo() + "/RECORD"
	files[self] = record(files, self)
	return files, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
