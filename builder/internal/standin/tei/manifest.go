package tei

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pelletier/go-toml/v2"
)

// Manifest is the part of a Cargo.toml the stand-in cargo reads.
type Manifest struct {
	// Path is the file it was read from.
	Path string `toml:"-"`
	// Package is [package]; Version may be a string or {workspace = true}.
	Package struct {
		Name    string `toml:"name"`
		Version any    `toml:"version"`
	} `toml:"package"`
	// Bins are the [[bin]] targets.
	Bins []struct {
		Name string `toml:"name"`
		Path string `toml:"path"`
	} `toml:"bin"`
	// Features is [features].
	Features map[string][]string `toml:"features"`
	// Dependencies is [dependencies]: a version string or a table each.
	Dependencies map[string]any `toml:"dependencies"`
	// Workspace is [workspace] of a workspace root.
	Workspace *struct {
		Members        []string       `toml:"members"`
		DefaultMembers []string       `toml:"default-members"`
		Package        map[string]any `toml:"package"`
		Dependencies   map[string]any `toml:"dependencies"`
	} `toml:"workspace"`
	// Patch is [patch.<registry>].
	Patch map[string]map[string]any `toml:"patch"`
}

// ReadManifest reads and parses the Cargo.toml at path. Its errors are
// worded as cargo's: "failed to parse manifest at `PATH`".
func ReadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read `%s`\n\nCaused by:\n  %w", path, err)
	}
	var m Manifest
	if err := toml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("failed to parse manifest at `%s`\n\nCaused by:\n  %w", path, err)
	}
	m.Path = path
	return &m, nil
}

// OptionalDeps lists the dependencies marked optional = true, sorted.
func (m *Manifest) OptionalDeps() []string {
	var out []string
	for name, spec := range m.Dependencies {
		if t, ok := spec.(map[string]any); ok && t["optional"] == true {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// HasBin reports whether the package builds a binary named name: a [[bin]]
// of that name, or the package's own name with src/main.rs.
func (m *Manifest) HasBin(name string) bool {
	for _, b := range m.Bins {
		if b.Name == name {
			return true
		}
	}
	if m.Package.Name != name {
		return false
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(m.Path), "src", "main.rs"))
	return err == nil
}

// BinNames lists the binaries the package builds.
func (m *Manifest) BinNames() []string {
	var out []string
	for _, b := range m.Bins {
		out = append(out, b.Name)
	}
	if len(out) == 0 && m.HasBin(m.Package.Name) {
		out = append(out, m.Package.Name)
	}
	return out
}

// VersionIn returns the package's version, from the workspace root ws when
// it says version.workspace = true.
func (m *Manifest) VersionIn(ws *Manifest) string {
	switch v := m.Package.Version.(type) {
	case string:
		return v
	case map[string]any:
		if v["workspace"] == true && ws != nil && ws.Workspace != nil {
			if s, ok := ws.Workspace.Package["version"].(string); ok {
				return s
			}
		}
	}
	return "0.0.0"
}
