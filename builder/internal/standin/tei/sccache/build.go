package sccache

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/internal/standin/tei"
)

// Build is what an installed sccache was compiled with: the version
// `cargo install sccache --version` asked for and its enabled features.
type Build struct {
	Version  string   `json:"version"`
	Features []string `json:"features"`
}

// buildMagic ends an sccache the stand-in cargo installed: its Build is a
// trailer (tei.AppendTrailer), the stand-in's "compiled in".
var buildMagic = []byte("JBSCC\x00\x01\n")

// features are sccache v0.10's cargo features (Cargo.toml), with what each
// enables of the others; "default" is ["all"].
var features = map[string][]string{
	"all":   {"dist-client", "redis", "s3", "memcached", "gcs", "azure", "gha", "webdav", "oss"},
	"azure": nil, "gcs": nil, "gha": nil, "memcached": nil, "oss": nil, "redis": nil, "s3": nil, "webdav": nil,
	"dist-client": nil, "dist-server": nil, "native-zlib": nil, "vendored-openssl": nil, "unstable": nil,
}

// ResolveFeatures resolves `cargo install sccache` features: the default
// ("all") unless noDefault, the requested ones, and what they enable. An
// unknown feature fails as cargo fails.
func ResolveFeatures(version string, requested []string, noDefault bool) ([]string, error) {
	queue := slices.Clone(requested)
	if !noDefault {
		queue = append(queue, "all")
	}
	var out []string
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		implied, ok := features[f]
		if !ok {
			return nil, fmt.Errorf("failed to compile `sccache v%s`, intermediate artifacts can be found at `/tmp/cargo-install`.\n\n"+
				"Caused by:\n  Package `sccache v%s` does not have the feature `%s`", version, version, f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
			queue = append(queue, implied...)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Install writes the stand-in sccache program, with b compiled in, to w.
func Install(w io.Writer, program []byte, b Build) error {
	return tei.AppendTrailer(w, program, buildMagic, b)
}

// ReadBuild reads what the sccache at path was installed with.
func ReadBuild(path string) (Build, error) {
	var b Build
	found, err := tei.ReadTrailer(path, buildMagic, &b)
	if err == nil && !found {
		err = fmt.Errorf("%s was not installed by `cargo install sccache` (the stand-in cargo)", path)
	}
	return b, err
}

// atLeast reports whether version v (as "0.10.0") is at least major.minor.
func atLeast(v string, major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > major || a == major && b >= minor
}
