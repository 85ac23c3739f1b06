package pydist_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/pydist"
)

// withPins is NGC's stack with more of what its constraint file pins: a
// pure-Python pin (tqdm), torchvision, and a wheel whose extension module
// NEEDs libc10.so (a library the list of names does not know).
func withPins() tree {
	t := ngcBase()
	t["/etc/pip/constraint.txt"] = append(t["/etc/pip/constraint.txt"], []byte("tqdm==4.66.5\ntorchvision==0.22.0a0\nmmcv-lite==2.2.0\n")...)
	t.dist(ngcSite, "tqdm", "4.66.5").dist(ngcSite, "torchvision", "0.22.0a0").dist(ngcSite, "mmcv-lite", "2.2.0")
	record := ngcSite + "/mmcv_lite-2.2.0.dist-info/RECORD"
	t[record] = append(t[record], []byte("mmcv_lite/_ext.cpython-312-aarch64-linux-gnu.so,sha256=x,10\n")...)
	return t
}

// readBase reads t and links it with the DT_NEEDED entries an image scan
// would have found.
func readBase(t *testing.T, files tree) *pydist.Inventory {
	t.Helper()
	inv, err := pydist.ReadDir(context.Background(), files.write(t))
	require.NoError(t, err)
	inv.Link(map[string][]string{ngcSite + "/mmcv_lite/_ext.cpython-312-aarch64-linux-gnu.so": {"libc10.so", "libstdc++.so.6"}})
	return inv
}

func TestFrameworkLinksTorch(t *testing.T) {
	base := readBase(t, withPins())
	require.Equal(t, []string{"mmcv-lite", "torch", "torchvision", "triton"}, pydist.Framework(base))
	require.Equal(t, []string{"numpy", "tqdm"}, pydist.Pinned(base))
	require.True(t, base.HasTorch())
}

func TestComparePurePinUpgradedWarns(t *testing.T) {
	base := readBase(t, withPins())
	img := withPins().venv("/opt/venv", true).dist(venvSite, "tqdm", "4.67.1")
	inv, err := pydist.ReadDir(context.Background(), img.write(t))
	require.NoError(t, err)
	r := pydist.CompareApp(base, inv, "/opt/venv/bin/obliteratus")
	require.NoError(t, r.Err(), "tqdm cannot break torch")
	require.Len(t, r.Warnings(), 1)
	require.Equal(t, "the base's tqdm 4.66.5 at "+ngcSite+"/tqdm-4.66.5.dist-info is shadowed by tqdm 4.67.1 at "+venvSite+
		"/tqdm-4.67.1.dist-info, which is in the venv /opt/venv, whose python imports it first: the base's /etc/pip/constraint.txt pins it (tqdm==4.66.5), "+
		"but it is neither torch nor built against torch's libraries, so the build goes on; install the app with -c /etc/pip/constraint.txt to keep the version NVIDIA tested with the container",
		r.Warnings()[0].Sentence())
}

func TestCompareTorchCoupledUpgradedFails(t *testing.T) {
	base := readBase(t, withPins())
	for name, version := range map[string]string{"torchvision": "0.23.0", "mmcv-lite": "2.3.0"} {
		img := withPins().venv("/opt/venv", true).dist(venvSite, name, version)
		inv, err := pydist.ReadDir(context.Background(), img.write(t))
		require.NoError(t, err)
		r := pydist.CompareApp(base, inv, "/opt/venv/bin/obliteratus")
		require.ErrorContains(t, r.Err(), "the base's "+name+" ", name)
		require.ErrorContains(t, r.Err(), "is shadowed by "+name+" "+version)
		require.Empty(t, r.Warnings())
	}
}

func TestHasTorch(t *testing.T) {
	inv, err := pydist.ReadDir(context.Background(), tree{}.dist(ngcSite, "numpy", "1.26.4").write(t))
	require.NoError(t, err)
	require.False(t, inv.HasTorch())
}
