// Package refs rewrites image references: registry mirrors, digest pins, and
// which registries are reached over plain HTTP.
package refs

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Mirrors rewrites the registry of base images, as `--mirror nvcr.io=HOST:PORT`
// asks, for air-gapped builds and for the tests' local registry.
type Mirrors map[string]string

// ParseMirror parses one `REGISTRY=MIRROR` flag value into m.
func (m Mirrors) ParseMirror(flag string) error {
	from, to, ok := strings.Cut(flag, "=")
	to = strings.TrimSuffix(to, "/")
	if !ok || from == "" || to == "" || strings.Contains(from, "/") {
		return fmt.Errorf("--mirror %q: want REGISTRY=HOST[:PORT], e.g. --mirror nvcr.io=127.0.0.1:5000", flag)
	}
	if from == "docker.io" {
		from = name.DefaultRegistry // go-containerregistry's name for Docker Hub
	}
	m[from] = to
	return nil
}

// Rewrite returns ref with its registry replaced by its mirror, and pinned to
// digest when digest is not empty.
func (m Mirrors) Rewrite(ref, digest string) (string, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	registry := parsed.Context().RegistryStr()
	repo := parsed.Context().RepositoryStr()
	out := registry + "/" + repo
	if to, ok := m[registry]; ok {
		out = to + "/" + repo
	}
	if digest != "" {
		if t, ok := parsed.(name.Tag); ok {
			return out + ":" + t.TagStr() + "@" + digest, nil
		}
		return out + "@" + digest, nil
	}
	if _, ok := parsed.(name.Digest); ok {
		return out + "@" + parsed.Identifier(), nil
	}
	return out + ":" + parsed.Identifier(), nil
}

// PlainHTTP reports whether the registry of ref (an image reference or a
// repository) is reached over plain HTTP, by go-containerregistry's rule
// (name.Registry.Scheme): localhost, loopback and private (RFC 1918)
// addresses and *.local names. go-containerregistry applies the rule itself;
// BuildKit's image exporter must be told the same with registry.insecure.
func PlainHTTP(ref string) bool {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return false
	}
	return parsed.Context().Scheme() == "http"
}
