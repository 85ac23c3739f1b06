package pick

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/refs"
)

// image is one digest of the repository with its tags and metadata.
type image struct {
	digest string
	tags   []string
	meta   Meta
	err    error // why the image could not be read as a jetbake image
}

// listImages lists the repository's tags and reads each digest's metadata
// once: the index or manifest and the config blob, never a layer.
func listImages(ctx context.Context, repository string, o *options) ([]image, error) {
	repo, err := readRepo(repository, o.mirrors)
	if err != nil {
		return nil, err
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(o.keychain)}
	if o.transport != nil {
		ropts = append(ropts, remote.WithTransport(o.transport))
	}
	tags, err := remote.List(repo, ropts...)
	if err != nil {
		return nil, fmt.Errorf("list the tags of %s: %w", repository, err)
	}
	if len(tags) == 0 {
		return nil, fmt.Errorf("%s has no tags", repository)
	}
	slices.Sort(tags)
	byDigest := map[string]*image{}
	var order []string
	for _, tag := range tags {
		desc, err := remote.Get(repo.Tag(tag), ropts...)
		if err != nil {
			return nil, fmt.Errorf("read %s:%s: %w", repository, tag, err)
		}
		d := desc.Digest.String()
		if img, ok := byDigest[d]; ok {
			img.tags = append(img.tags, tag)
			continue
		}
		o.progress(fmt.Sprintf("reading %s:%s (%s)", repository, tag, d))
		img := &image{digest: d, tags: []string{tag}}
		img.meta, img.err = readMeta(desc, o.platform)
		byDigest[d] = img
		order = append(order, d)
	}
	out := make([]image, 0, len(order))
	for _, d := range order {
		out = append(out, *byDigest[d])
	}
	return out, nil
}

// readRepo parses the repository, through its mirror when there is one, and
// allows plain HTTP for registries on this machine.
func readRepo(repository string, mirrors refs.Mirrors) (name.Repository, error) {
	if strings.ContainsAny(repository, "@") || strings.Count(repository[strings.LastIndex(repository, "/")+1:], ":") > 0 {
		return name.Repository{}, fmt.Errorf("%q: give a repository without tag or digest, such as ghcr.io/jetbake/text-embeddings-router", repository)
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
		return name.Repository{}, fmt.Errorf("repository %q: %w", repository, err)
	}
	return repo, nil
}

// readMeta reads an image's metadata: the index's annotations, else those of
// its image for the platform, else that image's config labels.
func readMeta(desc *remote.Descriptor, platform v1.Platform) (Meta, error) {
	var sources []map[string]string
	var img v1.Image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return Meta{}, err
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return Meta{}, err
		}
		sources = append(sources, im.Annotations)
		for _, m := range im.Manifests {
			if m.Platform != nil && m.Platform.OS == platform.OS && m.Platform.Architecture == platform.Architecture {
				if img, err = idx.Image(m.Digest); err != nil {
					return Meta{}, err
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
			return Meta{}, err
		}
	}
	m, err := img.Manifest()
	if err != nil {
		return Meta{}, err
	}
	sources = append(sources, m.Annotations)
	cfg, err := img.ConfigFile()
	if err != nil {
		return Meta{}, err
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
