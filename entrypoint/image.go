package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
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
	// needs is what the host rule needs of the image, without its
	// forward-compatibility folders (see hostNeeds).
	needs computecap.ImageNeeds
}

// loadImage reads /etc/jetbake/image.json under the root, with the
// shipped table of Jetson facts.
func loadImage(root host.Root) (*image, error) {
	return loadImageWith(root, computecap.DefaultTable())
}

// loadImageWith reads /etc/jetbake/image.json under the root with table t.
func loadImageWith(root host.Root, t *computecap.Table) (*image, error) {
	data, err := root.ReadFile(imagespec.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing: this image was not built by jetbake, or the file was removed", imagespec.Path)
	}
	var odd *host.NotRegularError
	switch {
	case errors.As(err, &odd):
		return nil, fmt.Errorf("%s is %s, not a regular file: this image was not built by jetbake, or something is mounted over the file", imagespec.Path, odd.Kind)
	case errors.Is(err, host.ErrTooLarge):
		return nil, fmt.Errorf("%s is over %d bytes: jetbake writes a few KiB; this image was not built by jetbake", imagespec.Path, host.MaxFile)
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %w", imagespec.Path, err)
	}
	spec, err := imagespec.Parse(data)
	if err == nil {
		var img *image
		if img, err = parseImageWith(spec, t); err == nil {
			return img, nil
		}
	}
	var bad *imagespec.Error
	if errors.As(err, &bad) {
		bad.File = imagespec.Path
		bad.Place(data)
		return nil, bad
	}
	return nil, fmt.Errorf("%s is not usable: %w", imagespec.Path, err)
}

// parseImage checks and parses the versions of a validated description
// with the shipped table.
func parseImage(spec *imagespec.Image) (*image, error) {
	return parseImageWith(spec, computecap.DefaultTable())
}

// parseImageWith checks and parses the versions of a validated description.
func parseImageWith(spec *imagespec.Image, t *computecap.Table) (*image, error) {
	img := &image{Image: spec}
	for i, t := range spec.Targets {
		c, err := computecap.Parse(t.SM)
		if err != nil {
			return nil, badField(fmt.Sprintf("targets[%d].sm", i), t.SM, "is not a compute capability such as 8.7")
		}
		img.caps = append(img.caps, c)
	}
	if spec.CUDA != "" {
		v, err := computecap.ParseCUDAVersion(spec.CUDA)
		if err != nil {
			return nil, badField("cuda", spec.CUDA, "is not a CUDA version such as 12.6")
		}
		img.cuda = v
	}
	needs, err := host.Needs(t, host.Image{L4T: spec.L4T, JetPack: spec.JetPack, CUDA: spec.CUDA}, nil)
	if err != nil {
		var unknown *host.UnknownJetPackError
		if errors.As(err, &unknown) {
			return nil, badField("jetpack", spec.JetPack, "is not a JetPack release this entrypoint knows, and l4t is empty")
		}
		return nil, badField("l4t", spec.L4T, "is not an L4T release such as 36.4.3")
	}
	img.needs, img.l4tMajor = needs, needs.L4T.Major
	return img, nil
}

// badField is a value of the description the entrypoint cannot use.
func badField(field, value, message string) *imagespec.Error {
	return &imagespec.Error{Field: field, Value: computecap.QuoteShort(value), Message: message,
		Fix: "rebuild the image with 'jetbake build', which writes this file"}
}

// hostNeeds is the image's needs with the forward-compatibility folders
// present in the image.
func hostNeeds(cfg *config, img *image) computecap.ImageNeeds {
	n := img.needs
	n.CompatDirs = host.PresentCompat(cfg.table, host.Root(cfg.root))
	return n
}

// wantDriver reports whether the driver's CUDA version matters after an
// override: the image has a CUDA version, and is for a JetPack whose host
// rule compares the driver's CUDA, or has forward-compatibility libraries.
func wantDriver(cfg *config, img *image) bool {
	if img == nil || img.cuda.IsZero() {
		return false
	}
	if _, rule, ok := cfg.table.FlavourOfL4T(img.l4tMajor); ok && rule == computecap.RuleDriverCUDA {
		return true
	}
	return cfg.root.IsDir(host.CompatDir)
}
