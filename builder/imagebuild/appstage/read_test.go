package appstage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/stretchr/testify/require"
	fstypes "github.com/tonistiigi/fsutil/types"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/pydist"
	"github.com/jetbake/jetbake/computecap"
)

// dirRef is a gateway result over a local folder, as the daemon serves one.
type dirRef struct{ root string }

func (d dirRef) ToState() (llb.State, error)    { return llb.Scratch(), nil }
func (d dirRef) Evaluate(context.Context) error { return nil }

func (d dirRef) ReadFile(_ context.Context, req gateway.ReadRequest) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(d.root, req.Filename))
	if err != nil || req.Range == nil {
		return data, err
	}
	end := min(len(data), req.Range.Offset+req.Range.Length)
	return data[min(req.Range.Offset, end):end], nil
}

func (d dirRef) StatFile(_ context.Context, req gateway.StatRequest) (*fstypes.Stat, error) {
	fi, err := os.Stat(filepath.Join(d.root, req.Path))
	if err != nil {
		return nil, err
	}
	return &fstypes.Stat{Path: fi.Name(), Mode: uint32(fi.Mode()), Size: fi.Size()}, nil
}

func (d dirRef) ReadDir(_ context.Context, req gateway.ReadDirRequest) ([]*fstypes.Stat, error) {
	entries, err := os.ReadDir(filepath.Join(d.root, req.Path))
	if err != nil {
		return nil, err
	}
	var out []*fstypes.Stat
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, &fstypes.Stat{Path: e.Name(), Mode: uint32(fi.Mode()), Size: fi.Size()})
	}
	return out, nil
}

// writeFiles writes files (path: content) under root.
func writeFiles(t *testing.T, root string, files map[string]string, mode fs.FileMode) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), mode))
	}
}

const (
	sitePackages = "/usr/local/lib/python3.11/dist-packages"
	venvSite     = "/opt/venv/lib/python3.11/site-packages"
	bnbLib       = venvSite + "/bitsandbytes/libbitsandbytes_cuda126.so"
	torchLib     = sitePackages + "/torch/lib/libtorch_cuda.so"
)

// standinBase is what the build reads of a stand-in 6.2 base: torch in the
// system's site-packages, pinned by the constraint file, with a CUDA
// library for sm_87.
func standinBase() *Base {
	torch := pydist.Dist{Name: "torch", Version: "2.8.0a0+5228986c39.nv25.06", Path: sitePackages + "/torch-2.8.0a0+5228986c39.nv25.06.dist-info"}
	return &Base{
		Inv: &pydist.Inventory{Dists: []pydist.Dist{torch},
			Constraints: []pydist.Pin{{Name: "torch", Version: torch.Version, Spec: "torch==" + torch.Version}}},
		Scan: &imageaudit.Scan{Files: []imageaudit.CUDAFile{{Path: torchLib,
			Modules: [][]computecap.Code{{{Kind: computecap.Cubin, Target: computecap.MustParse("8.7")}}}}}},
	}
}

// stageOf reads a stage whose changes are changes (a folder) and whose
// whole file system is stage, as Read does.
func stageOf(t *testing.T, changes, stage string) (*pydist.Inventory, []buildaudit.Code) {
	t.Helper()
	ctx := context.Background()
	sc := &stageChanges{pyDir: t.TempDir(), files: map[string]bool{}}
	err := walkRef(ctx, dirRef{changes}, func(name string, mode fs.FileMode, size int64) error {
		sc.files[name] = true
		code, ok, err := readStageFile(ctx, dirRef{changes}, name, mode, size, sc.pyDir)
		if ok {
			sc.code = append(sc.code, code)
		}
		return err
	})
	require.NoError(t, err)
	read := standinBase()
	kept, err := baseFilesKept(ctx, dirRef{stage}, read, sc)
	require.NoError(t, err)
	inv, err := stageInventory(ctx, read.Inv, sc, kept)
	require.NoError(t, err)
	return inv, imageCode(read, sc, kept)
}

// The checks of an app's stage, from its changes and the base's read:
// a venv with the app keeps the vendor torch and its library passes for
// Orin; a torch that a dependency pulled into the venv shadows it; a
// stage that removed it loses it; an SBSA wheel's library with no sm_87
// code is refused by name.
func TestCheckAppStage(t *testing.T) {
	base := map[string]string{
		sitePackages + "/torch-2.8.0a0+5228986c39.nv25.06.dist-info/METADATA": "Name: torch\nVersion: 2.8.0a0+5228986c39.nv25.06\n",
		pydist.ConstraintPath: "torch==2.8.0a0+5228986c39.nv25.06\n",
	}
	venv := map[string]string{
		"/opt/venv/pyvenv.cfg":                             "home = /usr/bin\ninclude-system-site-packages = true\n",
		venvSite + "/obliteratus-0.1.0.dist-info/METADATA": "Name: obliteratus\nVersion: 0.1.0\n",
	}
	layout := func(files ...map[string]string) (changes, stage string) {
		changes, stage = t.TempDir(), t.TempDir()
		writeFiles(t, stage, base, 0o644)
		writeFiles(t, stage, map[string]string{torchLib: "ELF"}, 0o755)
		for _, f := range files {
			writeFiles(t, changes, f, 0o644)
			writeFiles(t, stage, f, 0o644)
		}
		return changes, stage
	}
	rel := buildaudit.Release{Name: "jetpack6.2", CUDA: "12.9", SMs: []string{"8.7"}}
	table := computecap.DefaultTable()

	changes, stage := layout(venv)
	inv, code := stageOf(t, changes, stage)
	require.NoError(t, pydist.CompareApp(standinBase().Inv, inv, "/opt/venv/bin/obliteratus").Err())
	audits, err := rel.Judge(table, nil, code)
	require.NoError(t, err)
	require.Equal(t, "runs", audits[0].Verdict)
	require.Equal(t, torchLib, audits[0].Files[0].Path)

	shadow := map[string]string{venvSite + "/torch-2.9.0.dist-info/METADATA": "Name: torch\nVersion: 2.9.0\n"}
	changes, stage = layout(venv, shadow)
	inv, _ = stageOf(t, changes, stage)
	err = pydist.CompareApp(standinBase().Inv, inv, "/opt/venv/bin/obliteratus").Err()
	require.ErrorContains(t, err, "torch")
	require.ErrorContains(t, err, "2.9.0")
	require.ErrorContains(t, err, venvSite+"/torch-2.9.0.dist-info")

	changes, stage = layout(venv)
	require.NoError(t, os.RemoveAll(filepath.Join(stage, sitePackages, "torch-2.8.0a0+5228986c39.nv25.06.dist-info")))
	inv, _ = stageOf(t, changes, stage)
	require.Empty(t, inv.Find("torch", ""))
	require.ErrorContains(t, pydist.CompareApp(standinBase().Inv, inv, "/opt/venv/bin/obliteratus").Err(), "torch")

	changes, stage = layout(venv)
	elf := fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", []fatbintest.Code{fatbintest.Cubin("7.5"), fatbintest.Cubin("8.0"), fatbintest.Cubin("9.0"), fatbintest.PTX("9.0")}))
	for _, root := range []string{changes, stage} {
		writeFiles(t, root, map[string]string{bnbLib: string(elf), venvSite + "/bitsandbytes/__init__.py": strings.Repeat("#", 100)}, 0o644)
	}
	_, code = stageOf(t, changes, stage)
	require.True(t, slices.ContainsFunc(code, func(c buildaudit.Code) bool { return c.Path == bnbLib }))
	_, err = rel.Judge(table, nil, code)
	require.ErrorContains(t, err, "audit: "+bnbLib+" holds sm_75 cubin and sm_80 cubin and sm_90 cubin and compute_90 PTX")
	require.ErrorContains(t, err, "no code for Jetson Orin, SM 8.7, an SM target of release jetpack6.2")
}

// A folder the gateway cannot list fails the walk, naming it.
func TestWalkRefError(t *testing.T) {
	err := walkRef(context.Background(), dirRef{filepath.Join(t.TempDir(), "gone")}, func(string, fs.FileMode, int64) error { return nil })
	require.ErrorContains(t, err, "read folder / of the app stage")
	require.True(t, errors.Is(err, fs.ErrNotExist))
}
