package appstage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/pydist"
)

// Bases reads, from the registry, what an app's framework container
// holds that the build checks the image against: its Python distributions
// (package pydist) and the CUDA code of its ELF files (package
// imageaudit). An NGC container is gigabytes: each base is read once per
// build, by its pinned reference, however many releases start from it,
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

	mu      sync.Mutex
	entries map[string]*Base
}

// Base is one base's read, done once done is closed.
type Base struct {
	done chan struct{}
	// Inv is its Python distributions, Scan its CUDA files.
	Inv  *pydist.Inventory
	Scan *imageaudit.Scan
	err  error
}

// NewBases reads bases with opts until ctx ends or Close, recording the
// reads in timings.
func NewBases(ctx context.Context, opts []remote.Option, timings *progress.Recorder) *Bases {
	ctx, cancel := context.WithCancel(ctx)
	return &Bases{ctx: ctx, cancel: cancel, remote: opts, timings: timings, entries: map[string]*Base{}}
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
		e.Inv, e.Scan, e.err = a.read(ref)
	}()
	return e
}

// read reads the base's distributions and CUDA files, both at once.
func (a *Bases) read(ref string) (*pydist.Inventory, *imageaudit.Scan, error) {
	var opts []imageaudit.Option
	if a.remote != nil {
		opts = append(opts, imageaudit.WithRemoteOptions(a.remote...))
	}
	im, err := imageaudit.Open(a.ctx, ref, opts...)
	if err != nil {
		return nil, nil, err
	}
	var inv *pydist.Inventory
	var scan *imageaudit.Scan
	eg, ctx := errgroup.WithContext(a.ctx)
	eg.Go(func() (err error) {
		if inv, err = pydist.ReadImage(ctx, im.Image); err != nil {
			return fmt.Errorf("read its Python packages: %w", err)
		}
		return nil
	})
	eg.Go(func() (err error) {
		if scan, err = imageaudit.ScanImage(ctx, im.Image); err != nil {
			return fmt.Errorf("read its CUDA files: %w", err)
		}
		return nil
	})
	if err := eg.Wait(); err != nil {
		return nil, nil, err
	}
	inv.Link(scan.Needed)
	return inv, scan, nil
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
