package imagepick

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
)

// image is one digest of the repository with its tags and metadata.
type image struct {
	digest string
	tags   []string
	meta   Meta
	err    error // why the image could not be read as a jetbake image
}

// listImages lists the repository's tags and reads each digest's metadata
// once: the index or manifest and the config blob, never a layer. A tag
// that is not a valid tag (a registry's own choice of text) is left out
// and counted.
func listImages(ctx context.Context, repository string, repo name.Repository, o *options) ([]image, int, error) {
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(o.keychain)}
	if o.transport != nil {
		ropts = append(ropts, remote.WithTransport(o.transport))
	}
	listed, err := remote.List(repo, ropts...)
	if err != nil {
		return nil, 0, refs.DescribeRegistryError("list the tags of "+repository, err)
	}
	var tags []string
	for _, tag := range listed {
		if _, err := name.NewTag(repository+":"+tag, name.StrictValidation); err == nil {
			tags = append(tags, tag)
		}
	}
	skipped := len(listed) - len(tags)
	if len(tags) == 0 {
		return nil, skipped, fmt.Errorf("%s has no tags%s", repository, skippedNote(skipped))
	}
	slices.Sort(tags)
	byDigest := map[string]*image{}
	var order []string
	for _, tag := range tags {
		desc, err := remote.Get(repo.Tag(tag), ropts...)
		if err != nil {
			return nil, skipped, refs.DescribeRegistryError("read "+repository+":"+tag, err)
		}
		d := desc.Digest.String()
		if img, ok := byDigest[d]; ok {
			img.tags = append(img.tags, tag)
			continue
		}
		o.progress(fmt.Sprintf("reading %s:%s (%s)", repository, tag, d))
		img := &image{digest: d, tags: []string{tag}}
		img.meta, img.err = readMeta(desc, o.platform, "read "+repository+":"+tag)
		byDigest[d] = img
		order = append(order, d)
	}
	out := make([]image, 0, len(order))
	for _, d := range order {
		out = append(out, *byDigest[d])
	}
	return out, skipped, nil
}

// skippedNote says how many tags were left out, or "".
func skippedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d listed tags are not valid tags and were left out)", n)
}

// RepositoryError is a REPOSITORY argument that is not an image repository:
// input pick cannot use (the CLI exits 2), caught before any request.
type RepositoryError struct {
	// Repository is the argument as given.
	Repository string
	// Problem says what is wrong and how to write it.
	Problem string
}

// Error names the argument and the fix.
func (e *RepositoryError) Error() string {
	return "repository " + computecap.QuoteShort(e.Repository) + " " + e.Problem +
		": write it like ghcr.io/jetbake/text-embeddings-router, lowercase and without a tag"
}

// BadInput marks the error as input the command cannot use.
func (e *RepositoryError) BadInput() bool { return true }

// checkRepository refuses what is not a repository name before anything
// goes to the network: "https://ghcr.io/x" would go to the host "https",
// "acme/../router" to Docker Hub.
func checkRepository(repository string) error {
	last := repository[strings.LastIndex(repository, "/")+1:]
	var problem string
	switch {
	case repository == "":
		problem = "is empty"
	case strings.Contains(repository, "://"):
		problem = "has a URL scheme: drop the scheme"
	case strings.Contains(repository, "@"):
		problem = "names a digest: give the repository alone"
	case strings.Contains(last, ":"):
		problem = "names a tag: give the repository alone"
	case strings.IndexFunc(repository, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		problem = "holds white space or control characters"
	case hasUpperPath(repository):
		problem = "has capital letters in its path: repository names are lowercase"
	case !matrix.ValidRepository(repository):
		problem = "is not a repository name (each part lowercase letters and digits, with '.', '_' or '-' between)"
	}
	if problem != "" {
		return &RepositoryError{Repository: repository, Problem: problem}
	}
	return nil
}

// hasUpperPath reports whether the repository's path (after a registry
// host, which may have capitals) has capital letters.
func hasUpperPath(repository string) bool {
	path := repository
	if host, rest, ok := strings.Cut(repository, "/"); ok && strings.ContainsAny(host, ".:") {
		path = rest
	}
	return strings.ToLower(path) != path
}

// readRepo parses the repository, through its mirror when there is one, and
// allows plain HTTP for registries on this machine. A repository that is
// not one is a *RepositoryError.
func readRepo(repository string, mirrors refs.Mirrors) (name.Repository, error) {
	if err := checkRepository(repository); err != nil {
		return name.Repository{}, err
	}
	target := repository
	if len(mirrors) > 0 {
		rewritten, err := mirrors.Rewrite(repository+":latest", "")
		if err != nil {
			return name.Repository{}, err
		}
		target = strings.TrimSuffix(rewritten, ":latest")
	}
	// go-containerregistry reaches loopback and private registries over
	// plain HTTP by itself (name.Registry.Scheme).
	repo, err := name.NewRepository(target)
	if err != nil {
		return name.Repository{}, &RepositoryError{Repository: repository, Problem: "is not a repository (" + err.Error() + ")"}
	}
	return repo, nil
}

// readMeta reads an image's metadata: the index's annotations, else those of
// its image for the platform, else that image's config labels. what says
// what was asked, for the sentence of a registry's failure.
func readMeta(desc *remote.Descriptor, platform v1.Platform, what string) (Meta, error) {
	var sources []map[string]string
	var img v1.Image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return Meta{}, refs.DescribeRegistryError(what, err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return Meta{}, refs.DescribeRegistryError(what, err)
		}
		sources = append(sources, im.Annotations)
		for _, m := range im.Manifests {
			if m.Platform != nil && m.Platform.OS == platform.OS && m.Platform.Architecture == platform.Architecture {
				if img, err = idx.Image(m.Digest); err != nil {
					return Meta{}, refs.DescribeRegistryError(what, err)
				}
				break
			}
		}
		if img == nil {
			return Meta{}, fmt.Errorf("no %s/%s image in the index", platform.OS, platform.Architecture)
		}
	} else {
		var err error
		if img, err = desc.Image(); err != nil {
			return Meta{}, refs.DescribeRegistryError(what, err)
		}
	}
	m, err := img.Manifest()
	if err != nil {
		return Meta{}, refs.DescribeRegistryError(what, err)
	}
	sources = append(sources, m.Annotations)
	cfg, err := img.ConfigFile()
	if err != nil {
		return Meta{}, refs.DescribeRegistryError(what, err)
	}
	sources = append(sources, cfg.Config.Labels)
	i := slices.IndexFunc(sources, func(kv map[string]string) bool { return kv[matrix.KeyJetPack] != "" })
	if i < 0 {
		return Meta{}, fmt.Errorf("it is not a jetbake image: no %s annotation or label", matrix.KeyJetPack)
	}
	if cfg.Architecture != platform.Architecture || cfg.OS != platform.OS {
		return Meta{}, fmt.Errorf("it is a %s/%s image, not %s/%s", cfg.OS, cfg.Architecture, platform.OS, platform.Architecture)
	}
	return parseMeta(sources[i])
}
