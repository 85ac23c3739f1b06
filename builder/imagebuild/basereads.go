package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/refs"
)

// baseReaders is how many bases a build reads at once.
const baseReaders = 8

// baseReads reads what each base of a build holds (see package baseinfo),
// once per fetched reference however many releases use it, all at once
// and beside the build's start-up; a release waits for its own two only
// before it compiles anything.
type baseReads struct {
	entries map[string]*baseRead
	wg      sync.WaitGroup
	cancel  context.CancelFunc
}

// baseRead is one base's read, done once done is closed.
type baseRead struct {
	done chan struct{}
	info baseinfo.Info
	err  error
}

// readBases starts reading every base of jobs. A base the lock file pins,
// whose contents it recorded at that digest (WithKnownBases), is not read
// again: what a digest holds never changes.
func (b *Builder) readBases(ctx context.Context, jobs []*releaseJob, timings *progress.Recorder) *baseReads {
	reader := b.opts.baseReader
	if reader == nil {
		reader = baseinfo.New(baseinfo.WithRemoteOptions(b.opts.remoteOpts...))
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &baseReads{entries: map[string]*baseRead{}, cancel: cancel}
	slots := make(chan struct{}, baseReaders)
	for _, j := range jobs {
		j.bases = r
		if j.isApp() {
			continue // an app's base is read by appBases
		}
		for _, base := range [][2]string{{j.release.BuildBase, j.buildBase}, {j.release.RuntimeBase, j.runtimeBase}} {
			ref, fetched := base[0], base[1]
			if _, ok := r.entries[fetched]; ok {
				continue
			}
			e := &baseRead{done: make(chan struct{})}
			r.entries[fetched] = e
			if info, ok := b.opts.knownBases[ref]; ok && info.Digest != "" && info.Digest == b.opts.locks[ref] {
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
	}
	return r
}

// close stops the reads still going and waits for them.
func (r *baseReads) close() {
	if r == nil {
		return
	}
	r.cancel()
	r.wg.Wait()
}

// wait returns the read of the base fetched as fetched.
func (r *baseReads) wait(ctx context.Context, fetched string) (baseinfo.Info, error) {
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

// checkBases waits for the reads of the release's bases and checks them
// against the release: the CUDA flavour of its JetPack line and its CUDA
// major and minor. It fails naming each base that does not fit, with both
// versions or flavours. Without reads (a job built apart from Build) it
// checks nothing.
func (j *releaseJob) checkBases(ctx context.Context) error {
	if j.bases == nil || j.isApp() {
		return nil
	}
	needs := BaseNeeds(j.release)
	var errs []error
	for i, fetched := range []string{j.buildBase, j.runtimeBase} {
		info, err := j.bases.wait(ctx, fetched)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s base %s: could not read what CUDA it holds: %w", needs[i].Role, needs[i].Ref, err))
			continue
		}
		j.mu.Lock()
		j.baseInfo[i] = &info
		j.mu.Unlock()
		if err := info.Check(needs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	j.mu.Lock()
	j.baseErr = err
	j.mu.Unlock()
	return err
}

// baseError is the error checkBases (or, for an app, checkApp) failed the
// latest attempt with, or nil: the release's error as jetbake wrote it,
// not as it comes back through BuildKit ("failed to solve: ...").
func (j *releaseJob) baseError() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.baseErr != nil {
		return j.baseErr
	}
	return j.appErr
}

// describePullError is err in one sentence when its words say the name of
// a base's registry did not resolve (refs.DescribeTextFault), its fix ended
// with Advice.Offline; any other error is returned as it is.
func (b *Builder) describePullError(err error) error {
	described := refs.DescribeTextFault(err)
	var re *refs.RegistryError
	if described == err || !errors.As(described, &re) {
		return err
	}
	if b.opts.advice.Offline != "" {
		re.Fix += "; offline, " + b.opts.advice.Offline
	}
	return re
}
