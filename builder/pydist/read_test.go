package pydist_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/pydist"
)

func TestReadDirFindsDistsVenvsAndPins(t *testing.T) {
	fs := ngcBase().venv("/opt/venv", true).dist(venvSite, "Typing_Extensions", "4.12.2").dist(debSite, "python-apt", "2.7.7")
	fs[debSite+"/six-1.16.0.egg-info"] = []byte("Metadata-Version: 1.1\nName: six\nVersion: 1.16.0\n")
	fs[debSite+"/PyYAML-6.0.1.egg-info/PKG-INFO"] = []byte("garbage line\nMetadata-Version: 2.1\n")
	inv, err := pydist.ReadDir(context.Background(), fs.write(t))
	require.NoError(t, err)
	require.Equal(t, []pydist.Env{{Prefix: "/opt/venv", SystemSite: true}}, inv.Venvs)
	require.Equal(t, []pydist.Dist{
		{Name: "typing-extensions", Version: "4.12.2", Path: venvSite + "/Typing_Extensions-4.12.2.dist-info", Env: "/opt/venv"},
		{Name: "pyyaml", Version: "6.0.1", Path: debSite + "/PyYAML-6.0.1.egg-info"},
		{Name: "python-apt", Version: "2.7.7", Path: debSite + "/python_apt-2.7.7.dist-info"},
		{Name: "six", Version: "1.16.0", Path: debSite + "/six-1.16.0.egg-info"},
	}, slices.DeleteFunc(slices.Clone(inv.Dists), func(d pydist.Dist) bool { return strings.HasPrefix(d.Path, ngcSite) }))
	require.Len(t, inv.Find("Typing.Extensions", "/opt/venv"), 1)
	require.Len(t, inv.Find("pyyaml", ""), 1)
	require.Equal(t, "6.0.1", inv.Find("pyyaml", "")[0].Version)
	require.Equal(t, "1.16.0", inv.Find("six", "")[0].Version)
	require.Equal(t, []pydist.Pin{
		{Name: "torch", Version: ngcTorch, Spec: "torch==" + ngcTorch},
		{Name: "numpy", Version: "1.26.4", Spec: "numpy==1.26.4"},
		{Name: "triton", Version: "3.3.0", Spec: "Triton == 3.3.0"},
	}, inv.Constraints)
	require.Len(t, inv.Dists, 8)
}

func TestReadImageAppliesWhiteoutsAndLaterLayers(t *testing.T) {
	// The app's layer is what pip leaves after replacing torch: a
	// whiteout of the vendor's dist-info folder and PyPI's.
	app := tree{ngcSite + "/torch-" + ngcTorch + ".dist-info": nil}.dist(ngcSite, "torch", "2.9.0")
	app[ngcSite+"/numpy-1.26.4.dist-info"] = nil
	ctx := context.Background()
	base, err := pydist.ReadImage(ctx, image(t, ngcBase()))
	require.NoError(t, err)
	img, err := pydist.ReadImage(ctx, image(t, ngcBase(), app))
	require.NoError(t, err)
	r := pydist.Compare(base, img)
	require.Equal(t, map[string]pydist.Verdict{"torch": pydist.Replaced, "numpy": pydist.Removed, "triton": pydist.Kept}, verdicts(r))
	require.Equal(t, ngcSite+"/torch-2.9.0.dist-info", r.Findings[1].After.Path)

	dirInv, err := pydist.ReadDir(ctx, ngcBase().write(t))
	require.NoError(t, err)
	require.Equal(t, dirInv, base, "an image and a folder of the same files read the same")
}

func TestReadImageStopsOnACancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := pydist.ReadImage(ctx, image(t, ngcBase()))
	require.ErrorIs(t, err, context.Canceled)
}

func TestCompareImagesJudgesTheAppsVenv(t *testing.T) {
	// pip install of an app whose dependency pulls PyPI's torch into the
	// app's venv, made with --system-site-packages.
	app := tree{}.venv("/opt/venv", true).dist(venvSite, "obliteratus", "0.1.0").dist(venvSite, "torch", "2.9.0")
	ctx := context.Background()
	r, err := pydist.CompareImages(ctx, image(t, ngcBase()), image(t, ngcBase(), app), "/opt/venv/bin/obliteratus")
	require.NoError(t, err)
	require.Equal(t, pydist.Shadowed, verdicts(r)["torch"])
	require.ErrorContains(t, r.Err(), "is shadowed by torch 2.9.0 at "+venvSite+"/torch-2.9.0.dist-info, which is in the venv /opt/venv")

	r, err = pydist.CompareImages(ctx, image(t, ngcBase()), image(t, ngcBase(), tree{}.venv("/opt/venv", true).dist(venvSite, "obliteratus", "0.1.0")), "/opt/venv/bin/obliteratus")
	require.NoError(t, err)
	require.NoError(t, r.Err())
}
