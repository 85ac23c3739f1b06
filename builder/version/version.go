// Package version says which jetbake is running: its module version and
// commit, from the Go build information (runtime/debug.ReadBuildInfo) that
// `go install module@version` and `go build` in a checkout record, or from
// the values `make build` and `make release` link in.
package version

import (
	"runtime/debug"
	"strings"
)

// ModulePath is jetbake's Go module.
const ModulePath = "github.com/jetbake/jetbake"

// Set at link time by `make build` and `make release`
// (-X github.com/jetbake/jetbake/builder/version.linkVersion=...); read-only afterwards.
var (
	linkVersion string
	linkCommit  string
)

// Info is the running jetbake's version.
type Info struct {
	// Version is the module version ("v0.3.0", a pseudo-version), or
	// "(devel)" for a build of a checkout that was not given one.
	Version string `json:"version"`
	// Commit is the commit it was built from, when known.
	Commit string `json:"commit,omitempty"`
	// Modified reports a build of a checkout with uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built it.
	GoVersion string `json:"go"`
	// FromModule reports a binary built from jetbake's module as a
	// dependency of the build (go install module@version): its source is in
	// the module cache under Version.
	FromModule bool `json:"-"`
}

// Get returns the running jetbake's version.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fromLink(Info{Version: "(devel)"})
	}
	return fromLink(FromBuildInfo(bi))
}

// FromBuildInfo reads an Info out of bi.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	info.FromModule = bi.Main.Path == ModulePath && info.Version != "(devel)"
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	if info.Commit == "" {
		info.Commit = pseudoCommit(info.Version)
	}
	return info
}

func fromLink(info Info) Info {
	if linkVersion != "" {
		info.Version, info.FromModule = linkVersion, false
	}
	if linkCommit != "" {
		info.Commit = linkCommit
	}
	return info
}

// pseudoCommit is the commit prefix a pseudo-version ends with
// (v0.0.0-20261130150000-abcdef123456), else "".
func pseudoCommit(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndex(v, "-")
	if i < 0 || len(v)-i-1 != 12 {
		return ""
	}
	c := v[i+1:]
	if strings.Trim(c, "0123456789abcdef") != "" {
		return ""
	}
	return c
}

// String is "VERSION (commit COMMIT)" or just the version.
func (i Info) String() string {
	s := i.Version
	if i.Commit != "" {
		s += " (commit " + i.Commit
		if i.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s
}
