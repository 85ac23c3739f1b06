package detect

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// ParsedDescription is the image's description with its versions parsed.
type ParsedDescription struct {
	*imagespec.Description
	// Caps are the targets' compute capabilities, in Targets order.
	Caps []computecap.Capability
	// CUDAVersion is the image's CUDA version; zero when the description
	// has none.
	CUDAVersion computecap.CUDAVersion
	// L4TMajor is the image's L4T major; 0 when it is not a Jetson image.
	L4TMajor int
	// needs is what the host rule needs of the image, without its
	// forward-compatibility folders (see hostNeeds).
	needs computecap.ImageNeeds
	// Table is the table the image is decided with: the entrypoint's,
	// with the facts the image declares (imagespec's Facts) added, the
	// entrypoint's own rows winning. A caller decides with it.
	Table *computecap.Table
}

// LoadImage reads /etc/jetbake/image.json under the root with table t.
func LoadImage(root host.Root, t *computecap.Table) (*ParsedDescription, error) {
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
		var img *ParsedDescription
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
func parseImage(spec *imagespec.Description) (*ParsedDescription, error) {
	return parseImageWith(spec, computecap.DefaultTable())
}

// parseImageWith checks and parses the versions of a validated description.
func parseImageWith(spec *imagespec.Description, t *computecap.Table) (*ParsedDescription, error) {
	if spec.Facts != nil {
		// Rows the builder checked; one that contradicts this table's is
		// left out, and this table's row decides.
		t, _ = t.Declare(*spec.Facts)
	}
	img := &ParsedDescription{Description: spec, Table: t}
	for i, t := range spec.Targets {
		c, err := computecap.Parse(t.SM)
		if err != nil {
			return nil, badField(fmt.Sprintf("targets[%d].sm", i), t.SM, "is not a compute capability such as 8.7")
		}
		img.Caps = append(img.Caps, c)
	}
	if spec.CUDA != "" {
		v, err := computecap.ParseCUDAVersion(spec.CUDA)
		if err != nil {
			return nil, badField("cuda", spec.CUDA, "is not a CUDA version such as 12.6")
		}
		img.CUDAVersion = v
	}
	needs, err := host.Needs(t, host.ImageFields{L4T: spec.L4T, JetPack: spec.JetPack, CUDA: spec.CUDA}, nil)
	if err != nil {
		var unknown *host.UnknownJetPackError
		if errors.As(err, &unknown) {
			return nil, badField("jetpack", spec.JetPack, "is not a JetPack release this entrypoint knows, and l4t is empty")
		}
		return nil, badField("l4t", spec.L4T, "is not an L4T release such as 36.4.3")
	}
	img.needs, img.L4TMajor = needs, needs.L4T.Major
	return img, nil
}

// badField is a value of the description the entrypoint cannot use.
func badField(field, value, message string) *imagespec.Error {
	return &imagespec.Error{Field: field, Value: computecap.QuoteShort(value), Message: message,
		Fix: "rebuild the image with 'jetbake build', which writes this file"}
}

// hostNeeds is the image's needs with the forward-compatibility folders
// present in the image.
func hostNeeds(cfg *Config, img *ParsedDescription) computecap.ImageNeeds {
	n := img.needs
	n.CompatDirs = host.PresentCompat(cfg.Table, host.Root(cfg.Root))
	return n
}

// WantDriver reports whether the driver's CUDA version matters after an
// override: the image has a CUDA version, and is for a JetPack whose host
// rule compares the driver's CUDA, or has forward-compatibility libraries.
func WantDriver(cfg *Config, img *ParsedDescription) bool {
	if img == nil || img.CUDAVersion.IsZero() {
		return false
	}
	if _, rule, ok := cfg.Table.FlavourOfL4T(img.L4TMajor); ok && rule == computecap.RuleDriverCUDA {
		return true
	}
	return cfg.Root.IsDir(host.CompatDir)
}
