// Package entrypointdir checks the folder a build's images take jetbake's
// own binaries from (the entrypoint, the CUDA probe, the evidence probe):
// every binary there, and the entrypoint built from the commit of the
// jetbake that builds; Error says what is wrong and the fix.
package entrypointdir

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
)

// Check checks that dir holds the binaries names (the entrypoint's first)
// and, when both commits are known, that the entrypoint was built from
// toolCommit: the jetbake that builds, not the matrix's repository.
func Check(dir, toolCommit string, names ...string) error {
	if dir == "" {
		return &Error{}
	}
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return &Error{Dir: dir, Missing: name}
		}
	}
	path := filepath.Join(dir, names[0])
	if built := revision(path); built != "" && toolCommit != "" && !sameCommit(built, toolCommit) {
		return &Error{Dir: dir, Binary: path, BuiltFrom: built, Tool: toolCommit}
	}
	return nil
}

// sameCommit compares a full commit with another or with a 12-digit prefix
// (the commit of a pseudo-version).
func sameCommit(a, b string) bool {
	n := min(len(a), len(b))
	return n >= 12 && a[:n] == b[:n]
}

// revision reads the commit the entrypoint binary at path was built from
// (Go's vcs.revision, which `make build` records), or "".
func revision(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

// Error is a folder (imagebuild.WithEntrypointDir) the images cannot take
// their entrypoint binaries from: none given, one that lacks a binary, or
// one whose binaries were built from another jetbake commit than the one
// the builds jetbake names (imagebuild.WithTool).
type Error struct {
	// Dir is the folder; "" when none was given.
	Dir string
	// Missing is the binary the folder lacks, if that is the problem.
	Missing string
	// Binary, BuiltFrom and Tool are, when the commits differ, the binary,
	// the commit it was built from and the commit of the jetbake that builds.
	Binary, BuiltFrom, Tool string
}

// Error says what is wrong with the folder and the fix.
func (e *Error) Error() string {
	switch {
	case e.Dir == "":
		return "no entrypoint binaries: give WithEntrypointDir the folder with the linux/arm64 jetbake-entrypoint, jetbake-cudaprobe and jetbake-probe"
	case e.Missing != "":
		return fmt.Sprintf("entrypoint folder %s lacks %s: cross-compile it for linux/arm64 into that folder", e.Dir, e.Missing)
	}
	return fmt.Sprintf("%s was built from jetbake commit %.12s but this jetbake is commit %.12s: build the entrypoint binaries from this jetbake's commit",
		e.Binary, e.BuiltFrom, e.Tool)
}
