package main

import (
	"errors"
	"fmt"
	"io/fs"

	computecap "github.com/jetbake/jetbake/compute_cap"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// image is the image's description with its versions parsed.
type image struct {
	*imagespec.Image
	// caps are the targets' compute capabilities, in Targets order.
	caps []computecap.Capability
	// cuda is the image's CUDA version; zero when the description has none.
	cuda computecap.CUDAVersion
	// l4tMajor is the image's L4T major; 0 when it is not a Jetson image.
	l4tMajor int
}

// loadImage reads /etc/jetbake/image.json under the root.
func loadImage(root sysroot) (*image, error) {
	data, err := root.readFile(imagespec.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing: this image was not built by jetbake, or the file was removed", imagespec.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", imagespec.Path, err)
	}
	spec, err := imagespec.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not usable: %w", imagespec.Path, err)
	}
	img, err := parseImage(spec)
	if err != nil {
		return nil, fmt.Errorf("%s is not usable: %w", imagespec.Path, err)
	}
	return img, nil
}

// parseImage checks and parses the versions of a validated description.
func parseImage(spec *imagespec.Image) (*image, error) {
	img := &image{Image: spec}
	for i, t := range spec.Targets {
		c, err := computecap.Parse(t.SM)
		if err != nil {
			return nil, fmt.Errorf("targets[%d].sm: %w", i, err)
		}
		img.caps = append(img.caps, c)
	}
	if spec.CUDA != "" {
		v, err := computecap.ParseCUDAVersion(spec.CUDA)
		if err != nil {
			return nil, fmt.Errorf("cuda: %w", err)
		}
		img.cuda = v
	}
	major, err := imageL4TMajor(spec.L4T, spec.JetPack)
	if err != nil {
		return nil, err
	}
	img.l4tMajor = major
	return img, nil
}

// imageL4TMajor is the L4T major of a release from its l4t field, or from
// its jetpack field when l4t is empty; 0 when both are empty.
func imageL4TMajor(l4t, jetpack string) (int, error) {
	if l4t != "" {
		v, err := parseL4TVersion(l4t)
		if err != nil {
			return 0, fmt.Errorf("l4t: %w", err)
		}
		return v.Major, nil
	}
	if jetpack == "" {
		return 0, nil
	}
	major, ok := computecap.L4TMajorForJetPack(jetpack)
	if !ok {
		return 0, fmt.Errorf("jetpack %s is not a JetPack release this entrypoint knows, and l4t is empty", quoteShort(jetpack))
	}
	return major, nil
}

// wantDriver reports whether the driver's CUDA version matters: the image
// has a CUDA version and forward-compatibility libraries.
func wantDriver(cfg *config, img *image) bool {
	return img != nil && !img.cuda.IsZero() && cfg.root.isDir(compatDir)
}
