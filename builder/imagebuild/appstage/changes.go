package appstage

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/moby/buildkit/client/llb"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/solver/pb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/gatewayfile"
	"github.com/jetbake/jetbake/builder/pydist"
)

// The app stage's changes are read through the gateway, from the daemon's
// cache, before anything is exported: the files the app stage wrote over
// its base (BuildKit's DiffOp, a few hundred megabytes of venv rather
// than an NGC container's gigabytes), one ReadDir per folder and ranged
// reads of the files that matter. Of the rest of the image, what the base
// holds was read once per build from the registry (Bases); a base file
// counts when the stage still has it (one stat each, for the few files
// that matter: distributions, venvs, the constraint file, CUDA files).

const (
	// maxStageEntries bounds the files and folders of the stage's changes.
	maxStageEntries = 2_000_000
	// maxPythonFile bounds a metadata, pyvenv.cfg or constraint file read.
	maxPythonFile = 1 << 20
	// stageReaders is how many gateway reads run at once.
	stageReaders = 16
)

// stageChanges is what the app stage's changes hold.
type stageChanges struct {
	// pyDir is a local folder holding the changes' files that a
	// pydist.Inventory reads, at their paths.
	pyDir string
	// code is the CUDA code of their ELF files.
	code []buildaudit.Code
	// files are the paths of every file of the changes.
	files map[string]bool
}

// readStageChanges reads the app stage's changes to its base: the DiffOp
// of the two when the daemon has it, else the whole stage.
func readStageChanges(ctx context.Context, c gateway.Client, state llb.State, base *llb.State, imports []gateway.CacheOptionsEntry, tmp string) (*stageChanges, error) {
	st := state
	caps := c.BuildOpts().LLBCaps
	if base != nil && caps.Supports(pb.CapDiffOp) == nil {
		st = llb.Diff(*base, state, llb.WithCustomName("the app stage's changes"))
	}
	ref, err := Solve(ctx, c, st, imports)
	if err != nil {
		return nil, err
	}
	sc := &stageChanges{pyDir: tmp, files: map[string]bool{}}
	if ref == nil {
		return sc, nil // the stage changed nothing
	}
	var mu sync.Mutex
	eg, egCtx := errgroup.WithContext(ctx)
	eg.SetLimit(stageReaders)
	err = walkRef(ctx, ref, func(name string, mode fs.FileMode, size int64) error {
		sc.files[name] = true
		eg.Go(func() error {
			code, ok, err := readStageFile(egCtx, ref, name, mode, size, tmp)
			if err != nil || !ok {
				return err
			}
			mu.Lock()
			sc.code = append(sc.code, code)
			mu.Unlock()
			return nil
		})
		return egCtx.Err()
	})
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(sc.code, func(a, b buildaudit.Code) int { return strings.Compare(a.Path, b.Path) })
	return sc, nil
}

// Solve builds st for linux/arm64 and returns its result, nil for an
// empty one.
func Solve(ctx context.Context, c gateway.Client, st llb.State, imports []gateway.CacheOptionsEntry) (gateway.Reference, error) {
	def, err := st.Marshal(ctx, llb.Platform(ocispecs.Platform{OS: "linux", Architecture: "arm64"}))
	if err != nil {
		return nil, err
	}
	res, err := c.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB(), CacheImports: imports})
	if err != nil {
		return nil, err
	}
	return res.SingleRef()
}

// walkRef calls file for every regular file of ref, folder by folder.
func walkRef(ctx context.Context, ref gateway.Reference, file func(name string, mode fs.FileMode, size int64) error) error {
	dirs, seen := []string{"/"}, 0
	for len(dirs) > 0 {
		dir := dirs[len(dirs)-1]
		dirs = dirs[:len(dirs)-1]
		entries, err := ref.ReadDir(ctx, gateway.ReadDirRequest{Path: dir})
		if err != nil {
			return fmt.Errorf("read folder %s of the app stage: %w", dir, err)
		}
		for _, e := range entries {
			if seen++; seen > maxStageEntries {
				return fmt.Errorf("the app stage changes more than %d files: not an image to check", maxStageEntries)
			}
			name := path.Join(dir, e.Path)
			mode := fs.FileMode(e.Mode)
			switch {
			case mode.IsDir():
				dirs = append(dirs, name)
			case mode.IsRegular():
				if err := file(name, mode, e.Size); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// readStageFile copies a file that an inventory reads into tmp, and reads
// the CUDA code of an ELF file: a shared object or an executable (a
// Python package's other files are never ELF). ok says that code is one.
func readStageFile(ctx context.Context, ref gateway.Reference, name string, mode fs.FileMode, size int64, tmp string) (buildaudit.Code, bool, error) {
	if pydist.Wants(name) {
		data, err := ref.ReadFile(ctx, gateway.ReadRequest{Filename: name, Range: &gateway.FileRange{Length: maxPythonFile}})
		if err != nil {
			return buildaudit.Code{}, false, fmt.Errorf("read %s of the app stage: %w", name, err)
		}
		return buildaudit.Code{}, false, writeBeside(tmp, name, data)
	}
	if size < 64 || (mode&0o111 == 0 && !strings.Contains(path.Base(name), ".so")) {
		return buildaudit.Code{}, false, nil
	}
	r, err := gatewayfile.Open(ctx, ref, name)
	if err != nil {
		return buildaudit.Code{}, false, fmt.Errorf("read %s of the app stage: %w", name, err)
	}
	magic := make([]byte, 4)
	if _, err := r.ReadAt(magic, 0); err != nil || !bytes.Equal(magic, []byte("\x7fELF")) {
		return buildaudit.Code{}, false, nil
	}
	code, err := buildaudit.Read(name, buildaudit.RoleFile, r)
	if buildaudit.IsNotELF(err) {
		return buildaudit.Code{}, false, nil
	}
	if err != nil {
		return buildaudit.Code{}, false, fmt.Errorf("audit: %w", err)
	}
	return code, true, nil
}

// writeBeside writes data at name under root.
func writeBeside(root, name string, data []byte) error {
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}
