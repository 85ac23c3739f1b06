// Package layerwalk reads an image's file system once, as its layers
// leave it: go-containerregistry's mutate.Extract applies whiteouts,
// opaque folders and later layers, and its layer errors, which come after
// the end of the tar stream, are reported.
package layerwalk

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Walk calls fn for each entry of img's flattened file system, from the
// top layer down, with a reader of its content; fn's error ends the walk
// and is returned as is. A cancelled ctx ends it between entries.
func Walk(ctx context.Context, img v1.Image, fn func(hdr *tar.Header, r io.Reader) error) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// mutate.Extract ends the tar stream before it reports a
			// layer's error: the error comes after the end.
			if _, err := io.Copy(io.Discard, rc); err != nil {
				return fmt.Errorf("read the layers: %w", err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the layers: %w", err)
		}
		if err := fn(hdr, tr); err != nil {
			return err
		}
	}
}
