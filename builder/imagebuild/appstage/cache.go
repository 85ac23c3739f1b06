package appstage

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/pydist"
	"github.com/jetbake/jetbake/computecap"
)

// cacheVersion changes when what a cached read holds does.
const cacheVersion = 1

// maxCached bounds a cached read's file: an NGC container's is a few MiB
// (its distributions, the DT_NEEDED of its site folders' ELF files, the
// fat binaries' codes).
const maxCached = 64 << 20

// DefaultCacheDir is the folder of the reads Bases keeps, in the user's
// cache folder beside baseinfo's; "" when there is none.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "jetbake", "app-bases")
}

// cache keeps what was read of each base by its digest: a digest's
// contents never change, so a later build on the same base reads none of
// its layers (nor its manifest).
type cache struct{ dir string }

// cached is a base's read as the cache file holds it.
type cached struct {
	Version int                 `json:"version"`
	Inv     *pydist.Inventory   `json:"python"`
	Files   []cachedFile        `json:"cuda_files"`
	ELFs    int                 `json:"elfs"`
	Bytes   int64               `json:"bytes"`
	Needed  map[string][]string `json:"needed,omitempty"`
	Info    *baseinfo.Info      `json:"cuda"`
}

// cachedFile is an imageaudit.CUDAFile, its error as its sentence.
type cachedFile struct {
	Path    string              `json:"path"`
	Modules [][]computecap.Code `json:"modules,omitempty"`
	Code    []computecap.Code   `json:"code,omitempty"`
	Err     string              `json:"error,omitempty"`
}

// file is where the read of ref (pinned by digest) is kept; "" for none.
func (c cache) file(ref string) string {
	if c.dir == "" {
		return ""
	}
	d, err := name.NewDigest(ref)
	if err != nil {
		return "" // not pinned: its contents may change
	}
	return filepath.Join(c.dir, d.DigestStr()[len("sha256:"):]+".json")
}

// load is the kept read of ref, if any.
func (c cache) load(ref string) (*cached, bool) {
	file := c.file(ref)
	if file == "" {
		return nil, false
	}
	data, err := inputfile.Read(file, "cached read of a base", inputfile.WithLimit(maxCached))
	if err != nil {
		return nil, false
	}
	var k cached
	if json.Unmarshal(data, &k) != nil || k.Version != cacheVersion || k.Inv == nil || k.Info == nil {
		return nil, false
	}
	return &k, true
}

// scan is the kept imageaudit.Scan.
func (k *cached) scan() *imageaudit.Scan {
	scan := &imageaudit.Scan{ELFs: k.ELFs, Bytes: k.Bytes, Needed: k.Needed}
	for _, f := range k.Files {
		cf := imageaudit.CUDAFile{Path: f.Path, Modules: f.Modules, Code: f.Code}
		if f.Err != "" {
			cf.Err = errors.New(f.Err)
		}
		scan.Files = append(scan.Files, cf)
	}
	return scan
}

// store keeps the read of ref; a failure to keep it only costs the next
// build a read.
func (c cache) store(ref string, inv *pydist.Inventory, scan *imageaudit.Scan, info *baseinfo.Info) {
	file := c.file(ref)
	if file == "" {
		return
	}
	k := cached{Version: cacheVersion, Inv: inv, ELFs: scan.ELFs, Bytes: scan.Bytes, Needed: scan.Needed, Info: info}
	for _, f := range scan.Files {
		cf := cachedFile{Path: f.Path, Modules: f.Modules, Code: f.Code}
		if f.Err != nil {
			cf.Err = f.Err.Error()
		}
		k.Files = append(k.Files, cf)
	}
	data, err := json.Marshal(k)
	if err != nil || os.MkdirAll(c.dir, 0o755) != nil {
		return
	}
	_ = inputfile.WriteFile(file, data, 0o644)
}
