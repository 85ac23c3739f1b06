package imagepick

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/jetbake/jetbake/builder/refs"
)

// ErrTagNotFound is wrapped by Resolve's error when the registry has no
// such tag.
var ErrTagNotFound = errors.New("tag not in the registry")

// Resolved is what one tag of a repository names: the image's digest and
// its jetbake metadata.
type Resolved struct {
	// Digest is the digest the tag points at (the index, for a
	// multi-platform image).
	Digest string
	// Meta is the image's io.jetbake.* metadata.
	Meta Meta
}

// Resolve reads the image a tag of repository names, with Pick's registry
// code: the same keychain, mirrors and transport (WithKeychain,
// WithMirrors, WithTransport), and the same metadata (the index's
// annotations, else its linux/arm64 image's, else that image's labels). A
// missing tag wraps ErrTagNotFound; a registry's other answers are a
// *refs.RegistryError.
func Resolve(ctx context.Context, repository, tag string, opts ...Option) (Resolved, error) {
	o := options{keychain: authn.DefaultKeychain, platform: v1.Platform{OS: "linux", Architecture: "arm64"}, progress: func(string) {}}
	for _, opt := range opts {
		opt(&o)
	}
	repo, err := readRepo(repository, o.mirrors)
	if err != nil {
		return Resolved{}, err
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(o.keychain)}
	if o.transport != nil {
		ropts = append(ropts, remote.WithTransport(o.transport))
	}
	what := "read " + repository + ":" + tag
	if reg, _, _ := strings.Cut(repository, "/"); reg != repo.RegistryStr() {
		what += " through " + repo.RegistryStr() // the mirror that was asked
	}
	o.progress("reading " + repository + ":" + tag)
	desc, err := remote.Get(repo.Tag(tag), ropts...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return Resolved{}, fmt.Errorf("%s:%s is not in the registry: %w", repository, tag, ErrTagNotFound)
	}
	if err != nil {
		return Resolved{}, refs.DescribeRegistryError(what, err)
	}
	meta, err := readMeta(desc, o.platform, what)
	if err != nil {
		return Resolved{}, fmt.Errorf("%s:%s (%s): %w", repository, tag, desc.Digest, err)
	}
	return Resolved{Digest: desc.Digest.String(), Meta: meta}, nil
}
