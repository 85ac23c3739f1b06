package pydist

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// Limits of what is read of each file: METADATA's headers come first and
// are small; a constraint file pins a few hundred packages.
const (
	maxMetadata    = 64 << 10
	maxPyvenv      = 16 << 10
	maxConstraints = 1 << 20
	maxLine        = 4 << 10
)

// Normalize is name as PEP 503 compares it: lower case, each run of "-",
// "_" and "." one "-".
func Normalize(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.TrimSpace(name) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ParseMetadata reads the Name and Version headers of a METADATA or
// PKG-INFO file (core metadata, an RFC 822 header block), reading at most
// 64 KiB. Empty strings when a header is missing.
//
// A hand parser, because net/textproto and net/mail refuse whole blocks
// over one line without a colon, which old setuptools wrote, and only two
// headers are needed; FuzzParseMetadata covers it.
func ParseMetadata(r io.Reader) (name, version string) {
	sc := bufio.NewScanner(io.LimitReader(r, maxMetadata))
	sc.Buffer(make([]byte, 0, 512), maxLine)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			break // the body follows the headers
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // a continuation line
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch value = strings.TrimSpace(value); strings.ToLower(strings.TrimSpace(key)) {
		case "name":
			if name == "" {
				name = value
			}
		case "version":
			if version == "" {
				version = value
			}
		}
	}
	return name, version
}

// Pin is one requirement of a constraint file.
type Pin struct {
	// Name is the package's name, normalized.
	Name string
	// Version is the exact version of "name==version" ("===" too); empty
	// for other specifiers.
	Version string
	// Spec is the requirement as written, without comment or marker.
	Spec string
}

// ParseConstraints reads a pip constraint or requirements file such as
// NGC's /etc/pip/constraint.txt, at most 1 MiB: one requirement a line,
// "#" comments, "\" continuations. Options ("-c other.txt", "--index-url")
// and lines that name no package are left out; an environment marker
// (after ";") is dropped, so that a pin counts whatever the marker says.
//
// A hand parser: pip's is Python, and Go has no PEP 508 parser in the
// module graph; FuzzParseConstraints covers it.
func ParseConstraints(r io.Reader) []Pin {
	data, _ := io.ReadAll(io.LimitReader(r, maxConstraints))
	data = bytes.ReplaceAll(data, []byte("\\\r\n"), nil)
	data = bytes.ReplaceAll(data, []byte("\\\n"), nil)
	var out []Pin
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		p, ok := parsePin(line)
		if ok && !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, p)
		}
	}
	return out
}

// parsePin reads one line of a constraint file.
func parsePin(line string) (Pin, bool) {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	if i := strings.Index(line, "\t#"); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' || line[0] == '-' {
		return Pin{}, false
	}
	if i := strings.IndexByte(line, ';'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	end := strings.IndexFunc(line, func(r rune) bool { return !isNameRune(r) })
	if end < 0 {
		end = len(line)
	}
	name, rest := Normalize(line[:end]), strings.TrimSpace(line[end:])
	if name == "" || rest != "" && !strings.ContainsRune("[=<>!~@(", rune(rest[0])) {
		return Pin{}, false // a path or a URL, not a package's name
	}
	if strings.HasPrefix(rest, "[") {
		if j := strings.IndexByte(rest, ']'); j >= 0 {
			rest = strings.TrimSpace(rest[j+1:])
		}
	}
	p := Pin{Name: name, Spec: line}
	if v, ok := strings.CutPrefix(rest, "==="); ok {
		p.Version = strings.TrimSpace(v)
	} else if v, ok := strings.CutPrefix(rest, "=="); ok && !strings.ContainsAny(v, ",*") {
		p.Version = strings.TrimSpace(v)
	}
	if strings.ContainsAny(p.Version, " \t,<>=!~") {
		p.Version = ""
	}
	return p, true
}

// isNameRune reports whether r may be in a distribution's name (PEP 508:
// letters, digits, "-", "_", ".").
func isNameRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.'
}

// systemSite reads include-system-site-packages of a venv's pyvenv.cfg
// ("key = value" lines, at most 16 KiB).
func systemSite(r io.Reader) bool {
	sc := bufio.NewScanner(io.LimitReader(r, maxPyvenv))
	sc.Buffer(make([]byte, 0, 512), maxLine)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.EqualFold(strings.TrimSpace(key), "include-system-site-packages") {
			return strings.EqualFold(strings.TrimSpace(value), "true")
		}
	}
	return false
}
