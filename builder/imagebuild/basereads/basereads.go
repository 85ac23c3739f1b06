// Package basereads reads what the bases of a build hold (package
// baseinfo: their CUDA flavour and version) once per fetched reference,
// all at once beside the build's start-up, and lets each release wait for
// its own.
package basereads

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// readers is how many bases a build reads at once.
const readers = 8

// Reads reads what each base of a build holds (see package baseinfo),
// once per fetched reference however many releases use it, all at once
// and beside the build's start-up; a release waits for its own two only
// before it compiles anything.
type Reads struct {
	entries map[string]*read
	wg      sync.WaitGroup
	cancel  context.CancelFunc
}

// read is one base's read, done once done is closed.
type read struct {
	done chan struct{}
	info baseinfo.Info
	err  error
}

// Base is one base of a release: Ref as the matrix writes it, Fetched as
// the build pulls it (mirror and lock applied).
type Base struct{ Ref, Fetched string }

// Start starts reading every base with reader, eight at a time, each
// read's time recorded as resolve time. A base the lock file pins
// (locks, by Ref), whose contents known recorded at that digest, is not
// read again: what a digest holds never changes.
func Start(ctx context.Context, reader *baseinfo.Reader, bases []Base, known map[string]baseinfo.Info, locks map[string]string, timings *progress.Recorder) *Reads {
	ctx, cancel := context.WithCancel(ctx)
	r := &Reads{entries: map[string]*read{}, cancel: cancel}
	slots := make(chan struct{}, readers)
	for _, base := range bases {
		ref, fetched := base.Ref, base.Fetched
		if _, ok := r.entries[fetched]; ok {
			continue
		}
		e := &read{done: make(chan struct{})}
		r.entries[fetched] = e
		if info, ok := known[ref]; ok && info.Digest != "" && info.Digest == locks[ref] {
			e.info = info
			close(e.done)
			continue
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer close(e.done)
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				e.err = ctx.Err()
				return
			}
			defer func() { <-slots }()
			start := time.Now()
			e.info, e.err = reader.Read(ctx, fetched)
			timings.Record(progress.PhaseResolve, start)
		}()
	}
	return r
}

// Len is how many bases r reads: one per fetched reference.
func (r *Reads) Len() int { return len(r.entries) }

// Close stops the reads still going and waits for them; a nil Reads has
// none.
func (r *Reads) Close() {
	if r == nil {
		return
	}
	r.cancel()
	r.wg.Wait()
}

// Wait returns the read of the base fetched as fetched.
func (r *Reads) Wait(ctx context.Context, fetched string) (baseinfo.Info, error) {
	e, ok := r.entries[fetched]
	if !ok {
		return baseinfo.Info{}, fmt.Errorf("base %s was not read", fetched)
	}
	select {
	case <-e.done:
		return e.info, e.err
	case <-ctx.Done():
		return baseinfo.Info{}, ctx.Err()
	}
}
