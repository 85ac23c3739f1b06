package pydist_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/pydist"
)

// without drops every file under prefix.
func (t tree) without(prefix string) tree {
	for k := range t {
		if strings.HasPrefix(k, prefix) {
			delete(t, k)
		}
	}
	return t
}

func compareDirs(t *testing.T, base, img tree, opts ...pydist.CompareOption) *pydist.Report {
	t.Helper()
	b, err := pydist.ReadDir(context.Background(), base.write(t))
	require.NoError(t, err)
	i, err := pydist.ReadDir(context.Background(), img.write(t))
	require.NoError(t, err)
	return pydist.Compare(b, i, opts...)
}

// verdicts is each finding's package and verdict.
func verdicts(r *pydist.Report) map[string]pydist.Verdict {
	out := map[string]pydist.Verdict{}
	for _, f := range r.Findings {
		out[f.Package] = f.Verdict
	}
	return out
}

func TestCompareKeptWithAVenvThatSeesTheSystem(t *testing.T) {
	img := ngcBase().venv("/opt/venv", true).dist(venvSite, "obliteratus", "0.1.0").dist(venvSite, "transformers", "4.53.0")
	r := compareDirs(t, ngcBase(), img)
	require.Equal(t, map[string]pydist.Verdict{"torch": pydist.Kept, "numpy": pydist.Kept, "triton": pydist.Kept}, verdicts(r))
	require.NoError(t, r.Err())
	require.Empty(t, r.Problems())
}

func TestCompareReplacedInTheSystemPython(t *testing.T) {
	// pip install without the constraint file: it uninstalls the vendor
	// torch and writes PyPI's in the same folder.
	img := ngcBase().without(ngcSite+"/torch-").dist(ngcSite, "torch", "2.9.0")
	r := compareDirs(t, ngcBase(), img)
	require.Equal(t, pydist.Replaced, verdicts(r)["torch"])
	require.EqualError(t, r.Err(), "the base's torch "+ngcTorch+" at "+ngcSite+"/torch-"+ngcTorch+".dist-info was replaced by torch 2.9.0 at "+
		ngcSite+"/torch-2.9.0.dist-info: install the app with --no-deps or with PIP_CONSTRAINT=/etc/pip/constraint.txt (it pins torch=="+
		ngcTorch+"), and keep torch out of the lock export (uv export --no-emit-package torch)")
}

func TestCompareShadowedByAVenvThatSeesTheSystem(t *testing.T) {
	img := ngcBase().venv("/opt/venv", true).dist(venvSite, "obliteratus", "0.1.0").dist(venvSite, "torch", "2.9.0+cpu")
	r := compareDirs(t, ngcBase(), img)
	require.Equal(t, map[string]pydist.Verdict{"torch": pydist.Shadowed, "numpy": pydist.Kept, "triton": pydist.Kept}, verdicts(r))
	require.Len(t, r.Problems(), 1)
	s := r.Problems()[0].Sentence()
	require.Contains(t, s, "the base's torch "+ngcTorch+" at "+ngcSite+"/torch-"+ngcTorch+".dist-info is shadowed by torch 2.9.0+cpu at "+
		venvSite+"/torch-2.9.0+cpu.dist-info, which is in the venv /opt/venv, whose python imports it first: install the app with --no-deps")
}

func TestCompareShadowedInTheSystemPython(t *testing.T) {
	// pip install --user writes a second torch that the system python
	// imports first; the vendor copy stays in place.
	img := ngcBase().dist("/root/.local/lib/python3.12/site-packages", "torch", "2.9.0")
	r := compareDirs(t, ngcBase(), img)
	require.Equal(t, pydist.Shadowed, verdicts(r)["torch"])
	require.Contains(t, r.Err().Error(), "shadowed by torch 2.9.0 at /root/.local/lib/python3.12/site-packages/torch-2.9.0.dist-info, which is a second copy for the system python")
}

func TestCompareRemoved(t *testing.T) {
	img := ngcBase().without(ngcSite + "/triton")
	r := compareDirs(t, ngcBase(), img)
	require.Equal(t, pydist.Removed, verdicts(r)["triton"])
	require.EqualError(t, r.Err(), "the base's triton 3.3.0 at "+ngcSite+"/triton-3.3.0.dist-info was removed: install the app with --no-deps or with "+
		"PIP_CONSTRAINT=/etc/pip/constraint.txt (it pins triton==3.3.0), and keep triton out of the lock export (uv export --no-emit-package triton)")
}

func TestCompareAnIsolatedVenvCountsOnlyAsTheApp(t *testing.T) {
	// A venv without the system's site-packages never imports the vendor
	// torch: a tool's venv is no concern, the app's is.
	img := ngcBase().venv("/opt/tool", false).dist("/opt/tool/lib/python3.12/site-packages", "torch", "2.9.0")
	r := compareDirs(t, ngcBase(), img)
	require.NoError(t, r.Err())

	base, err := pydist.ReadDir(context.Background(), ngcBase().write(t))
	require.NoError(t, err)
	inv, err := pydist.ReadDir(context.Background(), img.write(t))
	require.NoError(t, err)
	app := pydist.AppPrefix(inv, "/opt/tool/bin/obliteratus")
	require.Equal(t, "/opt/tool", app)
	require.Empty(t, pydist.AppPrefix(inv, "/usr/bin/python3"))
	r = pydist.Compare(base, inv, pydist.WithApp(app))
	require.Equal(t, pydist.Shadowed, verdicts(r)["torch"])
}

func TestFrameworkIsWhatCanBreakTorch(t *testing.T) {
	base := ngcBase()
	base["/etc/pip/constraint.txt"] = append(base["/etc/pip/constraint.txt"], []byte("not-installed==1.0\n")...)
	inv, err := pydist.ReadDir(context.Background(), base.write(t))
	require.NoError(t, err)
	require.Equal(t, []string{"torch", "triton"}, pydist.Framework(inv))
	require.Equal(t, []string{"numpy"}, pydist.Pinned(inv), "a pin with no compiled file that links torch")
}
