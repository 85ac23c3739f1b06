package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
)

// registryContents reads everything the registry at host holds: for every
// tag of every repository, the manifests and indexes it leads to, and every
// blob they name (configs, layers, attestations, the blobs a cache index
// lists), each gzip blob also uncompressed. Keys say where each came from:
// "REPO@DIGEST MEDIATYPE".
func registryContents(t *testing.T, host string) map[string][]byte {
	t.Helper()
	reg, err := name.NewRegistry(host, name.Insecure)
	require.NoError(t, err)
	repos, err := remote.Catalog(t.Context(), reg)
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, r := range repos {
		repo := reg.Repo(r)
		tags, err := remote.List(repo, remote.WithContext(t.Context()))
		require.NoError(t, err)
		for _, tag := range tags {
			walkManifest(t, repo, repo.Tag(tag), out)
		}
	}
	return out
}

// walkManifest adds the manifest or index at ref and everything it names.
func walkManifest(t *testing.T, repo name.Repository, ref name.Reference, out map[string][]byte) {
	t.Helper()
	desc, err := remote.Get(ref, remote.WithContext(t.Context()))
	require.NoError(t, err)
	key := repo.String() + "@" + desc.Digest.String() + " " + string(desc.MediaType)
	if _, seen := out[key]; seen {
		return
	}
	out[key] = desc.Manifest
	var m struct {
		Config    *v1.Descriptor  `json:"config"`
		Layers    []v1.Descriptor `json:"layers"`
		Manifests []v1.Descriptor `json:"manifests"`
	}
	require.NoError(t, json.Unmarshal(desc.Manifest, &m), key)
	blobs := m.Layers
	if m.Config != nil {
		blobs = append(blobs, *m.Config)
	}
	for _, d := range m.Manifests {
		if d.MediaType.IsIndex() || d.MediaType.IsImage() {
			walkManifest(t, repo, repo.Digest(d.Digest.String()), out)
			continue
		}
		blobs = append(blobs, d) // a cache index lists its layers and config
	}
	for _, d := range blobs {
		key := repo.String() + "@" + d.Digest.String() + " " + string(d.MediaType)
		if _, seen := out[key]; seen {
			continue
		}
		l, err := remote.Layer(repo.Digest(d.Digest.String()), remote.WithContext(t.Context()))
		require.NoError(t, err)
		rc, err := l.Compressed()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err, key)
		out[key] = data
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			require.NoError(t, err, key)
			plain, err := io.ReadAll(zr)
			require.NoError(t, err, key)
			out[key+" (uncompressed)"] = plain
		}
	}
}

// whereFound lists the keys of contents whose value holds needle.
func whereFound(contents map[string][]byte, needle string) []string {
	var out []string
	for k, v := range contents {
		if bytes.Contains(v, []byte(needle)) {
			out = append(out, k)
		}
	}
	return out
}

// anyKey reports whether one of keys contains part.
func anyKey(keys []string, part string) bool {
	for _, k := range keys {
		if strings.Contains(k, part) {
			return true
		}
	}
	return false
}
