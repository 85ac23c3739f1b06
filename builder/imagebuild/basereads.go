package imagebuild

import (
	"context"
	"errors"
	"fmt"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imagebuild/basereads"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/refs"
)

// readBases starts reading every base of jobs (basereads.Start). A base
// the lock file pins, whose contents it recorded at that digest
// (WithKnownBases), is not read again: what a digest holds never changes.
func (b *Builder) readBases(ctx context.Context, jobs []*releaseJob, timings *progress.Recorder) *basereads.Reads {
	reader := b.opts.baseReader
	if reader == nil {
		reader = baseinfo.New(baseinfo.WithRemoteOptions(b.opts.remoteOpts...))
	}
	var bases []basereads.Base
	for _, j := range jobs {
		if !j.isApp() { // an app's base is read by appBases
			bases = append(bases, basereads.Base{Ref: j.release.BuildBase, Fetched: j.buildBase},
				basereads.Base{Ref: j.release.RuntimeBase, Fetched: j.runtimeBase})
		}
	}
	r := basereads.Start(ctx, reader, bases, b.opts.knownBases, b.opts.locks, timings)
	for _, j := range jobs {
		j.bases = r
	}
	return r
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
		info, err := j.bases.Wait(ctx, fetched)
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
