package appstage

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"path"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/layerwalk"
	"github.com/jetbake/jetbake/builder/pydist"
)

// Bases reads, from the registry, what an app's framework container
// holds that the build checks the image against: its Python distributions
// (package pydist) and the CUDA code of its ELF files (package
// imageaudit), in one walk over its layers. An NGC container is
// gigabytes: each base is read once, by its pinned reference, however
// many releases start from it, and kept by its digest for later builds,
// and only the app stage's changes are read from each image (see
// Read).
type Bases struct {
	// ctx is the build's: a read outlives the release that started it;
	// Close cancels it and waits for the reads.
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	remote  []remote.Option
	timings *progress.Recorder
	cache   cache

	mu      sync.Mutex
	entries map[string]*Base
}

// Base is one base's read, done once done is closed.
type Base struct {
	done chan struct{}
	// Inv is its Python distributions, Scan its CUDA files, Info its
	// CUDA (flavour and version) as package baseinfo reads it.
	Inv  *pydist.Inventory
	Scan *imageaudit.Scan
	Info *baseinfo.Info
	err  error
}

// NewBases reads bases with opts until ctx ends or Close, recording the
// reads in timings, and keeps what it read of each in cacheDir by the
// base's digest ("" keeps nothing; DefaultCacheDir is the user's).
func NewBases(ctx context.Context, opts []remote.Option, timings *progress.Recorder, cacheDir string) *Bases {
	ctx, cancel := context.WithCancel(ctx)
	return &Bases{ctx: ctx, cancel: cancel, remote: opts, timings: timings, cache: cache{dir: cacheDir}, entries: map[string]*Base{}}
}

// Close stops the reads still going and waits for them.
func (a *Bases) Close() {
	a.cancel()
	a.wg.Wait()
}

// Start starts reading the base at ref (pinned to a digest) unless the
// build already does, and returns its entry.
func (a *Bases) Start(ref string) *Base {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.entries[ref]; ok {
		return e
	}
	e := &Base{done: make(chan struct{})}
	a.entries[ref] = e
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(e.done)
		defer a.timings.Record(progress.PhaseResolve, time.Now())
		e.Inv, e.Scan, e.Info, e.err = a.read(ref)
	}()
	return e
}

// read reads the base's distributions, CUDA files and CUDA marker files
// in one walk over its layers, or from the cache when an earlier build
// read its digest.
func (a *Bases) read(ref string) (*pydist.Inventory, *imageaudit.Scan, *baseinfo.Info, error) {
	if k, ok := a.cache.load(ref); ok {
		return k.Inv, k.scan(), k.Info, nil
	}
	var opts []imageaudit.Option
	if a.remote != nil {
		opts = append(opts, imageaudit.WithRemoteOptions(a.remote...))
	}
	im, err := imageaudit.Open(a.ctx, ref, opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	cf, err := im.Image.ConfigFile()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read its config: %w", err)
	}
	// Each file's content goes to the one reader that wants it: the CUDA
	// marker files and the Python metadata are text, never ELF.
	inv, sc, markers := pydist.NewCollector(), imageaudit.NewScanner(), baseinfo.NewScanner()
	defer sc.Close()
	err = layerwalk.Walk(a.ctx, im.Image, func(hdr *tar.Header, r io.Reader) error {
		switch {
		case markers.Wants(hdr):
			return markers.File(hdr, r)
		case pydist.Wants(path.Clean("/" + hdr.Name)):
			return inv.File(hdr, r)
		}
		if err := markers.File(hdr, nil); err != nil { // its name only
			return err
		}
		return sc.File(hdr, r)
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read its Python packages and CUDA files: %w", err)
	}
	i, scan := inv.Done(), sc.Done()
	i.Link(scan.Needed)
	info, err := markers.Info(cf.Config.Env)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read its CUDA: %w", err)
	}
	a.cache.store(ref, i, scan, &info)
	return i, scan, &info, nil
}

// Wait returns the read of the base at ref, started by Start.
func (a *Bases) Wait(ctx context.Context, ref string) (*Base, error) {
	e := a.Start(ref)
	select {
	case <-e.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.err != nil {
		return nil, fmt.Errorf("read base %s: %w", ref, e.err)
	}
	return e, nil
}
