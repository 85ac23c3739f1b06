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

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/refs"
)

// Opened is an image to audit: where it came from and the annotations and
// labels that may name its SM targets.
type Opened struct {
	// Name is the reference or path it was opened from.
	Name string
	// Source is what it is: an image, an ELF file or a folder.
	Source Source
	// Image is the image for the platform; nil for an ELF file or a folder.
	Image v1.Image
	// Annotations are, in order, the index's annotations (when it came
	// from an index), the manifest's annotations and the config's labels.
	Annotations []map[string]string
	// path is the ELF file's or the folder's path.
	path string
}

// InputError is an IMAGE or a path that cannot be audited as given: bad input.
type InputError struct {
	// Image is the IMAGE or path given.
	Image string
	// Path is set when Image is a path on this machine: the sentence
	// starts with it ("./notes.txt is a text file, ...").
	Path bool
	// Problem says what is wrong and the fix.
	Problem string
}

// Error writes the sentence.
func (e *InputError) Error() string {
	if e.Path {
		return escape(e.Image) + " " + e.Problem
	}
	return "IMAGE " + escape(e.Image) + ": " + e.Problem
}

// accepted is what jetbake audit takes, for the fixes of the sentences.
const accepted = "jetbake audit takes an ELF file (an executable or a shared library), a folder of files, " +
	"an OCI layout folder, a Docker tarball (docker save IMAGE -o image.tar) or an image reference such as ghcr.io/acme/router:1.0"

// BadInput marks the error as the user's input: jetbake exits 2.
func (e *InputError) BadInput() bool { return true }

// Open opens src: an OCI layout folder, a Docker tarball (docker save), a
// reference in a registry, read through the options' mirrors and
// credentials, or files that are not an image: one ELF file, or a folder
// that is not an OCI layout (Source says which; Image is then nil). A
// multi-platform image gives its image for the platform. A path that is
// none of these is an *InputError that says what it is.
func Open(ctx context.Context, src string, opts ...Option) (*Opened, error) {
	o := newOptions(opts)
	if fi, err := os.Stat(src); err == nil {
		switch {
		case fi.IsDir() && isLayout(src):
			return openLayout(src, o.platform)
		case fi.IsDir():
			return &Opened{Name: src, Source: SourceFolder, path: src}, nil
		case !fi.Mode().IsRegular():
			return nil, &InputError{Image: src, Path: true, Problem: "is " + kindOf(fi.Mode()) + ", not a file jetbake audit reads: " + accepted}
		}
		return openFile(src)
	}
	if strings.ContainsAny(src, "/.") && (strings.HasPrefix(src, ".") || filepath.IsAbs(src)) {
		return nil, &InputError{Image: src, Path: true, Problem: "does not exist (no such file or folder): " + accepted}
	}
	return openRemote(ctx, src, o)
}

// isLayout reports whether dir is meant as an OCI layout: it holds an
// oci-layout file, or an index.json beside a blobs folder (an index.json
// alone is any web project's).
func isLayout(dir string) bool {
	has := func(f string) bool { _, err := os.Lstat(filepath.Join(dir, f)); return err == nil }
	return has("oci-layout") || (has("index.json") && has("blobs"))
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

func openLayout(dir string, platform v1.Platform) (*Opened, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, brokenLayout(dir, "its index.json is missing or damaged")
	}
	im := &Opened{Name: dir}
	for depth := 0; depth < 4; depth++ {
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, brokenLayout(dir, "its index.json, or an index it names, is missing or damaged")
		}
		im.Annotations = append(im.Annotations, m.Annotations)
		d, ok := choose(m.Manifests, platform)
		if !ok {
			return nil, &InputError{Image: dir, Problem: "holds no " + platform.String() + " image, or several images: keep one in the layout"}
		}
		im.Annotations = append(im.Annotations, d.Annotations)
		if !d.MediaType.IsIndex() {
			if im.Image, err = idx.Image(d.Digest); err != nil {
				return nil, brokenLayout(dir, "the manifest its index names, "+d.Digest.String()+", is missing or damaged")
			}
			return im.withManifest(fileError, "read "+dir)
		}
		if idx, err = idx.ImageIndex(d.Digest); err != nil {
			return nil, brokenLayout(dir, "the index its index names, "+d.Digest.String()+", is missing or damaged")
		}
	}
	return nil, &InputError{Image: dir, Problem: "nests indexes more than 4 deep"}
}

// brokenLayout is the sentence for a folder meant as an OCI layout that
// does not read as one.
func brokenLayout(dir, why string) error {
	return &InputError{Image: dir, Path: true, Problem: "is a folder with an OCI layout's files (oci-layout, or index.json and blobs), " +
		"but not a readable OCI layout (" + why + "): write the layout again (docker buildx build --output type=oci,tar=false,dest=DIR)"}
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
	// Source is what it is: an ELF file or a folder has no annotation.
	Source Source
}

// Error writes the sentence; the CLI adds its flag.
func (e *NoTargetsError) Error() string {
	if e.Source != SourceImage {
		return escape(e.Image) + " is " + e.Source.String() + ", not an image: it has no " + matrix.KeySMTargets +
			" annotation to read its GPUs from: name the GPUs to audit it for"
	}
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
	return nil, &NoTargetsError{Image: im.Name, Source: im.Source}
}
