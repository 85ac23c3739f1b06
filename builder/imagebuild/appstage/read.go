package appstage

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/pydist"
)

// Read reads what an app's image holds, before it is exported: the
// Python distributions (the stage's own and the base's that it kept) that
// pydist.CompareApp checks, and the CUDA code of every ELF file of the
// image that buildaudit judges. state is the app stage, base the state it
// starts from (nil: the whole stage is read), read the base's read from
// its registry (Bases); imports are the session's cache imports.
func Read(ctx context.Context, c gateway.Client, state llb.State, base *llb.State, imports []gateway.CacheOptionsEntry, read *Base) (*pydist.Inventory, []buildaudit.Code, error) {
	tmp, err := os.MkdirTemp("", "jetbake-app-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	var changes *stageChanges
	var stage gateway.Reference
	eg, egCtx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) {
		changes, err = readStageChanges(egCtx, c, state, base, imports, tmp)
		return err
	})
	eg.Go(func() (err error) {
		stage, err = Solve(egCtx, c, state, imports)
		return err
	})
	if err := eg.Wait(); err != nil {
		return nil, nil, err
	}
	kept, err := baseFilesKept(ctx, stage, read, changes)
	if err != nil {
		return nil, nil, err
	}
	inv, err := stageInventory(ctx, read.Inv, changes, kept)
	if err != nil {
		return nil, nil, err
	}
	return inv, imageCode(read, changes, kept), nil
}

// baseFilesKept stats, in the app stage, the base's files that the checks
// read and that the stage did not write (those are in changes): which of
// them the image still has.
func baseFilesKept(ctx context.Context, stage gateway.Reference, read *Base, changes *stageChanges) (map[string]bool, error) {
	var paths []string
	for _, d := range read.Inv.Dists {
		paths = append(paths, d.Path)
	}
	for _, v := range read.Inv.Venvs {
		paths = append(paths, path.Join(v.Prefix, "pyvenv.cfg"))
	}
	if len(read.Inv.Constraints) > 0 {
		paths = append(paths, pydist.ConstraintPath)
	}
	for _, f := range read.Scan.Files {
		paths = append(paths, f.Path)
	}
	kept := map[string]bool{}
	if stage == nil {
		return kept, nil
	}
	var mu sync.Mutex
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(stageReaders)
	for _, p := range paths {
		if changes.files[p] {
			continue
		}
		eg.Go(func() error {
			if _, err := stage.StatFile(ctx, gateway.StatRequest{Path: p}); err != nil {
				return nil // gone: the stage removed it
			}
			mu.Lock()
			kept[p] = true
			mu.Unlock()
			return nil
		})
	}
	return kept, eg.Wait()
}

// stageInventory is the image's Python distributions: the changes' own,
// read from their copies, and the base's that the stage kept. A base
// venv's pyvenv.cfg is written beside the changes' so that their
// distributions in it are placed in it.
func stageInventory(ctx context.Context, base *pydist.Inventory, changes *stageChanges, kept map[string]bool) (*pydist.Inventory, error) {
	for _, v := range base.Venvs {
		cfg := path.Join(v.Prefix, "pyvenv.cfg")
		if !kept[cfg] {
			continue
		}
		body := fmt.Sprintf("include-system-site-packages = %t\n", v.SystemSite)
		if err := writeBeside(changes.pyDir, cfg, []byte(body)); err != nil {
			return nil, err
		}
	}
	inv, err := pydist.ReadDir(ctx, changes.pyDir)
	if err != nil {
		return nil, err
	}
	for _, d := range base.Dists {
		if kept[d.Path] && !slices.ContainsFunc(inv.Dists, func(o pydist.Dist) bool { return o.Path == d.Path }) {
			inv.Dists = append(inv.Dists, d)
		}
	}
	slices.SortFunc(inv.Dists, func(a, b pydist.Dist) int { return strings.Compare(a.Path, b.Path) })
	if !changes.files[pydist.ConstraintPath] && kept[pydist.ConstraintPath] {
		inv.Constraints = base.Constraints
	}
	return inv, nil
}

// imageCode is the CUDA code of the image's ELF files: the changes', and
// the base's that the stage kept, by path.
func imageCode(read *Base, changes *stageChanges, kept map[string]bool) []buildaudit.Code {
	code := slices.Clone(changes.code)
	for _, f := range read.Scan.Files {
		if kept[f.Path] && f.Err == nil && len(f.Modules) > 0 {
			code = append(code, buildaudit.NewCode(f.Path, buildaudit.RoleFile, f.Modules))
		}
	}
	slices.SortFunc(code, func(a, b buildaudit.Code) int { return strings.Compare(a.Path, b.Path) })
	return code
}
