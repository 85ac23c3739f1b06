package imageaudit_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// TestOpen: a reference in a registry on 127.0.0.1, an OCI layout and a
// Docker tarball open to the same image; the SM targets come from the
// annotation, and a foreign image has none.
func TestOpen(t *testing.T) {
	img := image(t, map[string]string{"io.jetbake.sm-targets": "8.7,11.0"},
		layer(t, file{"usr/bin/router-87", elf(fatbintest.Cubin("8.7"))}))
	host := testregistry.New(t)
	ref, err := name.ParseReference(host + "/acme/router:1")
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref, img))
	dir := t.TempDir()
	_, err = layout.Write(filepath.Join(dir, "oci"), empty.Index)
	require.NoError(t, err)
	p, err := layout.FromPath(filepath.Join(dir, "oci"))
	require.NoError(t, err)
	require.NoError(t, p.AppendImage(img))
	require.NoError(t, tarball.WriteToFile(filepath.Join(dir, "image.tar"), ref, img))

	for _, src := range []string{host + "/acme/router:1", filepath.Join(dir, "oci"), filepath.Join(dir, "image.tar")} {
		im, err := imageaudit.Open(t.Context(), src)
		require.NoError(t, err, src)
		targets, err := im.Targets()
		require.NoError(t, err, src)
		require.Equal(t, []string{"8.7", "11.0"}, targets, src)
		r, err := imageaudit.Audit(t.Context(), im, cc("8.7"))
		require.NoError(t, err)
		require.True(t, r.OK, r.Sentence)
	}

	foreign := image(t, nil, layer(t, file{"usr/lib/libx.so", elf(fatbintest.Cubin("8.0"))}))
	fref, err := name.ParseReference(host + "/other/app:2")
	require.NoError(t, err)
	require.NoError(t, remote.Write(fref, foreign))
	im, err := imageaudit.Open(t.Context(), host+"/other/app:2")
	require.NoError(t, err)
	_, err = im.Targets()
	var nt *imageaudit.NoTargetsError
	require.ErrorAs(t, err, &nt)

	_, err = imageaudit.Open(t.Context(), "Not A Reference!")
	var ie *imageaudit.InputError
	require.ErrorAs(t, err, &ie)
	_, err = imageaudit.Open(t.Context(), host+"/acme/missing:1")
	require.ErrorContains(t, err, "cannot read "+host+"/acme/missing:1: the registry answered 404 Not Found")
}
