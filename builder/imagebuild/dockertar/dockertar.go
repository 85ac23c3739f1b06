// Package dockertar writes the arm64 image of an OCI layout as a tarball
// that `docker load` takes.
package dockertar

import (
	"fmt"

	"github.com/containerd/platforms"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// Write converts the arm64 image of the OCI layout at layoutDir
// into a tarball at dest that `docker load` takes, named by tags.
func Write(layoutDir, dest string, tags []string) error {
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		return fmt.Errorf("read OCI layout %s: %w", layoutDir, err)
	}
	img, err := findArm64(idx)
	if err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range tags {
		tag, err := name.NewTag(t)
		if err != nil {
			return fmt.Errorf("tag %q: %w", t, err)
		}
		refs[tag] = img
	}
	if err := tarball.MultiRefWriteToFile(dest, refs); err != nil {
		return fmt.Errorf("write docker tarball %s: %w", dest, err)
	}
	return nil
}

// findArm64 walks down the layout's indexes to the linux/arm64 image; an
// image without a platform counts as one, attestation manifests
// (unknown/unknown) do not.
func findArm64(idx v1.ImageIndex) (v1.Image, error) {
	arm64 := platforms.OnlyStrict(ocispecs.Platform{OS: "linux", Architecture: "arm64"})
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, desc := range im.Manifests {
		switch {
		case desc.MediaType.IsIndex():
			child, err := idx.ImageIndex(desc.Digest)
			if err != nil {
				return nil, err
			}
			if img, err := findArm64(child); err == nil {
				return img, nil
			}
		case desc.MediaType.IsImage() && (desc.Platform == nil || arm64.Match(ociPlatform(desc.Platform))):
			return idx.Image(desc.Digest)
		}
	}
	return nil, fmt.Errorf("no linux/arm64 image in the OCI layout")
}

// ociPlatform converts go-containerregistry's platform to the OCI type that
// containerd/platforms matches.
func ociPlatform(p *v1.Platform) ocispecs.Platform {
	return ocispecs.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant, OSVersion: p.OSVersion}
}
