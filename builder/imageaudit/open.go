package imageaudit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/refs"
)

// Opened is an image to audit: where it came from and the annotations and
// labels that may name its SM targets.
type Opened struct {
	// Name is the reference or path it was opened from.
	Name string
	// Image is the image for the platform.
	Image v1.Image
	// Annotations are, in order, the index's annotations (when it came
	// from an index), the manifest's annotations and the config's labels.
	Annotations []map[string]string
}

// InputError is an IMAGE that cannot be audited as given: bad input.
type InputError struct {
	// Image is the IMAGE given.
	Image string
	// Problem says what is wrong and the fix.
	Problem string
}

// Error writes the sentence.
func (e *InputError) Error() string { return "IMAGE " + escape(e.Image) + ": " + e.Problem }

// BadInput marks the error as the user's input: jetbake exits 2.
func (e *InputError) BadInput() bool { return true }

// Open opens src: an OCI layout folder, a Docker tarball (docker save), or
// a reference in a registry, read through the options' mirrors and
// credentials. A multi-platform image gives its image for the platform.
func Open(ctx context.Context, src string, opts ...Option) (*Opened, error) {
	o := newOptions(opts)
	if fi, err := os.Stat(src); err == nil {
		if fi.IsDir() {
			return openLayout(src, o.platform)
		}
		return openTarball(src)
	}
	if strings.ContainsAny(src, "/.") && (strings.HasPrefix(src, ".") || filepath.IsAbs(src)) {
		return nil, &InputError{Image: src, Problem: "no such file or folder: give an OCI layout folder, a Docker tarball or an image reference"}
	}
	return openRemote(ctx, src, o)
}

func openRemote(ctx context.Context, src string, o options) (*Opened, error) {
	target := src
	if len(o.mirrors) > 0 {
		rewritten, err := o.mirrors.Rewrite(src, "")
		if err != nil {
			return nil, &InputError{Image: src, Problem: err.Error()}
		}
		target = rewritten
	}
	ref, err := name.ParseReference(target, name.StrictValidation)
	if err != nil {
		return nil, &InputError{Image: src, Problem: "is not an image reference, an OCI layout folder or a Docker tarball: give one such as ghcr.io/acme/router:1.0 or ./image.tar"}
	}
	ropts := append([]remote.Option{remote.WithContext(ctx), remote.WithPlatform(o.platform)}, o.remote...)
	what := "read " + src
	desc, err := remote.Get(ref, ropts...)
	if err != nil {
		return nil, refs.DescribeRegistryError(what, err)
	}
	im := &Opened{Name: src}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, refs.DescribeRegistryError(what, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, refs.DescribeRegistryError(what, err)
		}
		im.Annotations = append(im.Annotations, m.Annotations)
	}
	if im.Image, err = desc.Image(); err != nil {
		return nil, refs.DescribeRegistryError(what+" for "+o.platform.String(), err)
	}
	return im.withManifest(refs.DescribeIfRegistry, what)
}

// withManifest adds the manifest's annotations and the config's labels.
func (im *Opened) withManifest(describe func(string, error) error, what string) (*Opened, error) {
	m, err := im.Image.Manifest()
	if err != nil {
		return nil, describe(what+": its manifest", err)
	}
	cf, err := im.Image.ConfigFile()
	if err != nil {
		return nil, describe(what+": its config", err)
	}
	im.Annotations = append(im.Annotations, m.Annotations, cf.Config.Labels)
	return im, nil
}

func fileError(what string, err error) error { return fmt.Errorf("%s: %w", what, err) }

func openTarball(path string) (*Opened, error) {
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return nil, &InputError{Image: path, Problem: "is not a Docker tarball (docker save) of one image, nor an OCI layout folder (" + refs.Printable(err.Error()) + ")"}
	}
	return (&Opened{Name: path, Image: img}).withManifest(fileError, "read "+path)
}

func openLayout(dir string, platform v1.Platform) (*Opened, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, &InputError{Image: dir, Problem: "is a folder but not an OCI layout (no readable oci-layout and index.json)"}
	}
	im := &Opened{Name: dir}
	for depth := 0; depth < 4; depth++ {
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", dir, err)
		}
		im.Annotations = append(im.Annotations, m.Annotations)
		d, ok := choose(m.Manifests, platform)
		if !ok {
			return nil, &InputError{Image: dir, Problem: "holds no " + platform.String() + " image, or several images: keep one in the layout"}
		}
		im.Annotations = append(im.Annotations, d.Annotations)
		if !d.MediaType.IsIndex() {
			if im.Image, err = idx.Image(d.Digest); err != nil {
				return nil, fmt.Errorf("read %s: %w", dir, err)
			}
			return im.withManifest(fileError, "read "+dir)
		}
		if idx, err = idx.ImageIndex(d.Digest); err != nil {
			return nil, fmt.Errorf("read %s: %w", dir, err)
		}
	}
	return nil, &InputError{Image: dir, Problem: "nests indexes more than 4 deep"}
}

// choose is the one manifest of an index, or its manifest for platform.
func choose(ds []v1.Descriptor, platform v1.Platform) (v1.Descriptor, bool) {
	if len(ds) == 1 {
		return ds[0], true
	}
	for _, d := range ds {
		if d.Platform != nil && d.Platform.OS == platform.OS && d.Platform.Architecture == platform.Architecture {
			return d, true
		}
	}
	return v1.Descriptor{}, false
}

// NoTargetsError is a foreign image (no io.jetbake.sm-targets annotation
// or label) audited without GPUs named: bad input.
type NoTargetsError struct {
	// Image is the IMAGE given.
	Image string
}

// Error writes the sentence; the CLI adds its flag.
func (e *NoTargetsError) Error() string {
	return "IMAGE " + escape(e.Image) + " has no " + matrix.KeySMTargets +
		" annotation or label (jetbake did not build it): name the GPUs to audit it for"
}

// BadInput marks the error as the user's input: jetbake exits 2.
func (e *NoTargetsError) BadInput() bool { return true }

// Targets reads the image's SM targets from the io.jetbake.sm-targets
// annotation or label; a foreign image without it is a *NoTargetsError.
func (im *Opened) Targets() ([]string, error) {
	for _, kv := range im.Annotations {
		if v := strings.TrimSpace(kv[matrix.KeySMTargets]); v != "" {
			var out []string
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					out = append(out, s)
				}
			}
			return out, nil
		}
	}
	return nil, &NoTargetsError{Image: im.Name}
}
