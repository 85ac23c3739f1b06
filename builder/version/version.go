// Package version says which jetbake is running: its module version and
// commit, from the Go build information (runtime/debug.ReadBuildInfo) that
// `go install module@version` and `go build` in a checkout record, or from
// the values `make build` and `make release` link in.
package version

import (
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// ModulePath is jetbake's Go module.
const ModulePath = "github.com/jetbake/jetbake"

// Set at link time by `make build` and `make release`
// (-X github.com/jetbake/jetbake/builder/version.linkVersion=...); read-only afterwards.
var (
	linkVersion    string
	linkCommit     string
	linkCommitTime string // seconds since 1970, git log -1 --format=%ct
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
	// CommitTime is the commit's time, when known (zero otherwise): what
	// jetbake's own images are stamped with (SOURCE_DATE_EPOCH).
	CommitTime time.Time `json:"-"`
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
		case "vcs.time":
			info.CommitTime, _ = time.Parse(time.RFC3339, s.Value)
		}
	}
	if info.Commit == "" {
		info.Commit = pseudoCommit(info.Version)
	}
	if info.CommitTime.IsZero() {
		info.CommitTime = pseudoTime(info.Version)
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
	if sec, err := strconv.ParseInt(linkCommitTime, 10, 64); err == nil && sec > 0 {
		info.CommitTime = time.Unix(sec, 0).UTC()
	}
	return info
}

// pseudoTime is the commit time a pseudo-version carries
// (v0.0.0-20261130150000-abcdef123456, UTC), else the zero time.
func pseudoTime(v string) time.Time {
	if pseudoCommit(v) == "" {
		return time.Time{}
	}
	v, _, _ = strings.Cut(v, "+")
	parts := strings.Split(v[:strings.LastIndex(v, "-")], "-")
	stamp := parts[len(parts)-1]
	if i := strings.LastIndex(stamp, "."); i >= 0 { // vX.Y.Z-pre.0.20261130150000
		stamp = stamp[i+1:]
	}
	t, err := time.Parse("20060102150405", stamp)
	if err != nil {
		return time.Time{}
	}
	return t
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
