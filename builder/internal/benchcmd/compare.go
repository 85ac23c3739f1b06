package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// comparedDirs are the folders whose files both tools must put in every image.
var comparedDirs = []string{"usr/local/bin/", "etc/jetbake/"}

// compareImages checks that both tools pushed the same image for every
// release: the same files, byte for byte, under comparedDirs (image.json
// compared with bake's registry written as jetbake's). Layer counts may
// differ: jetbake adds two layers per image, the bake file one per COPY. It
// returns a one-line summary.
func compareImages(ctx context.Context, jb, bk *contender) (string, error) {
	files, jbLayers, bkLayers := 0, 0, 0
	for i, rel := range jb.plan.Releases {
		want, wantLayers, err := imageFiles(ctx, rel.Tags[0])
		if err != nil {
			return "", err
		}
		got, gotLayers, err := imageFiles(ctx, bk.plan.Releases[i].Tags[0])
		if err != nil {
			return "", err
		}
		for p, data := range got {
			got[p] = bytes.ReplaceAll(data, []byte(bk.reg.Registry), []byte(jb.reg.Registry))
		}
		if diff := diffFiles(want, got); diff != "" {
			return "", fmt.Errorf("release %s: %s", rel.Name, diff)
		}
		files, jbLayers, bkLayers = files+len(want), jbLayers+wantLayers, bkLayers+gotLayers
	}
	return fmt.Sprintf("the %d releases' images have the same %d files under /%s, byte for byte (layers: jetbake %d, bake %d)",
		len(jb.plan.Releases), files, strings.Join(comparedDirs, " and /"), jbLayers, bkLayers), nil
}

// imageFiles returns the files under comparedDirs of ref's linux/arm64 image
// and its number of layers.
func imageFiles(ctx context.Context, ref string) (map[string][]byte, int, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return nil, 0, fmt.Errorf("image %s: %w", ref, err)
	}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
	if err != nil {
		return nil, 0, fmt.Errorf("pull %s: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, 0, fmt.Errorf("layers of %s: %w", ref, err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", ref, err)
		}
		p := strings.TrimPrefix(hdr.Name, "/")
		if hdr.Typeflag != tar.TypeReg || !slices.ContainsFunc(comparedDirs, func(d string) bool { return strings.HasPrefix(p, d) }) {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, 0, fmt.Errorf("read %s in %s: %w", p, ref, err)
		}
		files[p] = data
	}
	return files, len(layers), nil
}

// diffFiles names the first difference between two file sets, or returns "".
func diffFiles(want, got map[string][]byte) string {
	paths := slices.Sorted(maps.Keys(want))
	for p := range got {
		if _, ok := want[p]; !ok {
			return fmt.Sprintf("bake's image has /%s, jetbake's has not", p)
		}
	}
	for _, p := range paths {
		g, ok := got[p]
		switch {
		case !ok:
			return fmt.Sprintf("jetbake's image has /%s, bake's has not", p)
		case !bytes.Equal(want[p], g):
			return fmt.Sprintf("/%s differs (sha256 %x in jetbake's, %x in bake's)", p, sha256.Sum256(want[p]), sha256.Sum256(g))
		}
	}
	return ""
}
