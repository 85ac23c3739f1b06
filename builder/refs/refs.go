// Package refs rewrites image references: registry mirrors, digest pins, and
// which registries are reached over plain HTTP.
package refs

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Mirrors rewrites the registry of base images, such as nvcr.io to a
// HOST:PORT, for air-gapped builds and for the tests' local registry.
type Mirrors map[string]string

// MirrorExample is a REGISTRY=HOST[:PORT] value, as ParseMirror reads it.
const MirrorExample = "nvcr.io=127.0.0.1:5000"

// MirrorError is a value that ParseMirror cannot read.
type MirrorError struct {
	// Value is the value as given.
	Value string
}

// Error names the value and the form it must have.
func (e *MirrorError) Error() string {
	return fmt.Sprintf("mirror %q: want REGISTRY=HOST[:PORT], e.g. %s", e.Value, MirrorExample)
}

// ParseMirror parses one REGISTRY=HOST[:PORT] value into m; a value it
// cannot read is a *MirrorError.
func (m Mirrors) ParseMirror(v string) error {
	from, to, ok := strings.Cut(v, "=")
	to = strings.TrimSuffix(to, "/")
	if !ok || from == "" || to == "" || strings.Contains(from, "/") {
		return &MirrorError{Value: v}
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
