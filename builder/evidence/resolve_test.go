package evidence

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/matrix"
)

// annotationsOf are the annotations jetbake puts on a release's index.
func annotationsOf(release string) map[string]string {
	return map[string]string{matrix.KeyRelease: release, matrix.KeyRevision: goldenRevision, matrix.KeyL4T: "36.4.3"}
}

func TestRegistryResolver(t *testing.T) {
	host := testregistry.New(t)
	repo := host + "/jetbake/tei"
	m := testMatrix(t, t.TempDir())
	current := pushIndex(t, repo+":1.9.3-jetpack6.2", annotationsOf("jetpack6.2"))
	older := pushIndex(t, repo+":old-jetpack6.2", annotationsOf("jetpack6.2"))
	foreign := pushIndex(t, repo+":not-ours", nil)
	pushIndex(t, repo+":1.9.3-jetpack6.1", annotationsOf("jetpack6.2"))
	r, err := NewRegistryResolver(m, repo)
	require.NoError(t, err)

	b, err := r.Current(t.Context(), "jetpack6.2")
	require.NoError(t, err)
	require.Equal(t, Built{Release: "jetpack6.2", Digest: current, Revision: goldenRevision, Source: "registry " + repo + ":1.9.3-jetpack6.2"}, b)

	b, err = r.Lookup(t.Context(), older)
	require.NoError(t, err)
	require.Equal(t, Built{Release: "jetpack6.2", Digest: older, Revision: goldenRevision, Source: "registry " + repo}, b)

	_, err = r.Lookup(t.Context(), foreign)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, "has no io.jetbake.release annotation, so jetbake did not build it")

	_, err = r.Lookup(t.Context(), otherDigest)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, repo+"@"+otherDigest+" is not in the registry")

	_, err = r.Current(t.Context(), "jetpack7.0")
	require.ErrorIs(t, err, ErrNotFound)

	_, err = r.Current(t.Context(), "jetpack6.1")
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, `points at an image of release "jetpack6.2", not jetpack6.1`)

	// Admitted through the registry alone, for the digest the probe names.
	ev := supported(t, func(ev *Evidence) { ev.Image.Digest = current })
	a, err := Admit(t.Context(), ev, m, r, goldenTime(), DefaultMaxAge)
	require.NoError(t, err)
	require.Equal(t, "jetpack6.2", a.Release.Name)
}

func TestChain(t *testing.T) {
	host := testregistry.New(t)
	repo := host + "/jetbake/tei"
	m := testMatrix(t, t.TempDir())
	pushed := pushIndex(t, repo+":1.9.3-jetpack6.2", annotationsOf("jetpack6.2"))
	reg, err := NewRegistryResolver(m, repo)
	require.NoError(t, err)
	c := Chain{metadata(goldenDigest), reg}

	b, err := c.Current(t.Context(), "jetpack6.2")
	require.NoError(t, err)
	require.Equal(t, goldenDigest, b.Digest, "the metadata file comes first")
	b, err = c.Lookup(t.Context(), pushed)
	require.NoError(t, err)
	require.Equal(t, "registry "+repo, b.Source)
	_, err = c.Current(t.Context(), "jetpack7.0")
	require.ErrorIs(t, err, ErrNotFound)
	require.EqualError(t, err, "build.json has no built image of jetpack7.0; "+repo+":1.9.3-jetpack7.0 is not in the registry")

	down, err := NewRegistryResolver(m, "127.0.0.1:1/jetbake/tei")
	require.NoError(t, err)
	_, err = Chain{metadata(goldenDigest), down}.Current(t.Context(), "jetpack7.0")
	require.False(t, errors.Is(err, ErrNotFound), "an unreachable registry is not 'not found': %v", err)
	_, err = Chain{}.Lookup(t.Context(), goldenDigest)
	require.ErrorIs(t, err, ErrNotFound)
}

func TestReadMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "build.json")
	rep := metadata(goldenDigest).Report
	rep.Releases = append(rep.Releases, imagebuild.ReleaseReport{Name: "jetpack7.2", Outcome: imagebuild.Untagged, Digest: otherDigest,
		Annotations: map[string]string{matrix.KeyRevision: "abcdef0"}})
	require.NoError(t, rep.WriteFile(path))
	r, err := ReadMetadata(path)
	require.NoError(t, err)
	b, err := r.Lookup(t.Context(), otherDigest)
	require.NoError(t, err)
	require.Equal(t, Built{Release: "jetpack7.2", Digest: otherDigest, Revision: "abcdef0", Source: path}, b)
	_, err = r.Current(t.Context(), "jetpack7.0")
	require.ErrorIs(t, err, ErrNotFound, "a failed release has no image")

	// A metadata file that does not read names its place, as the matrix's
	// errors do; bake's own keys in it are not a problem.
	for body, want := range map[string]string{
		"not json":                    ":1:2: $: not valid JSON at line 1, column 2: invalid character 'o' in literal null (expecting 'u')",
		`{"releases": {}}`:            ":1:14: releases: must be an array, not an object; fix: give the file 'jetbake build --metadata-file' wrote",
		`{"releases": [{"name": 1}]}`: ":1:24: releases[0].name: 1: must be a string, not a number",
	} {
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		_, err = ReadMetadata(path)
		require.ErrorContains(t, err, path+want)
		var fe *matrix.FileError
		require.ErrorAs(t, err, &fe)
	}
	require.NoError(t, os.WriteFile(path, []byte(`{"releases": [], "jetpack6.2": {"containerimage.digest": "x"}}`), 0o644))
	_, err = ReadMetadata(path)
	require.NoError(t, err)
}
