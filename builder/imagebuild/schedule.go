package imagebuild

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jetbake/jetbake/builder/imagebuild/placement"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/sharedsession"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/util/grpcerrors"
	"google.golang.org/grpc/codes"
)

// Node is one BuildKit daemon that releases can be built on.
type Node struct {
	// Name identifies the node in progress, metadata and sticky placement.
	Name string
	// Client is connected to the node's daemon.
	Client *client.Client
}

// scheduler places releases on nodes and retries those whose node failed.
type scheduler struct {
	nodes []Node
	// opts are the Builder's: retries, continueOnError and the advice
	// that ends the error of a release not started after a failure.
	opts    *options
	display *progress.Display
	slots   map[string]chan struct{} // per node: at most parallel builds
	// attempt builds one release on one node; nodeDown tells, after an
	// error, whether the node rather than the build failed.
	attempt  func(ctx context.Context, n Node, j *releaseJob) (ReleaseReport, error)
	nodeDown func(ctx context.Context, n Node, err error) bool

	mu       sync.Mutex
	failed   map[string]string // node -> why it was dropped
	attempts map[string]int    // release -> failed attempts so far
	stop     bool
}

func newScheduler(b *Builder, display *progress.Display, sessions sharedsession.Sessions) *scheduler {
	s := &scheduler{
		nodes: b.nodes, opts: &b.opts, display: display,
		slots: map[string]chan struct{}{}, failed: map[string]string{}, attempts: map[string]int{}, nodeDown: isNodeFailure,
		attempt: func(ctx context.Context, n Node, j *releaseJob) (ReleaseReport, error) {
			return b.attempt(ctx, n, j, display, sessions[n.Name])
		},
	}
	for _, n := range b.nodes {
		s.slots[n.Name] = make(chan struct{}, b.opts.parallel)
	}
	return s
}

// run builds every job. Without continue-on-error, a failed build stops
// releases that have not started; those already building finish, keeping
// their cache.
func (s *scheduler) run(ctx context.Context, jobs []*releaseJob, report *Report) {
	if len(jobs) == 0 {
		return
	}
	// Placed over the whole plan, not the selection: --release jetpack7.2
	// lands where jetpack7.2 lands in a full build, where its cache is.
	var names []string
	for _, r := range jobs[0].plan.Releases {
		names = append(names, r.Name)
	}
	order := placement.Order(names, s.nodes, func(n Node) string { return n.Name })
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			report.Releases[i] = s.buildWithRetries(ctx, j, order[j.release.Name])
		}()
	}
	wg.Wait()
}

// buildWithRetries tries the release's nodes in its sticky order.
func (s *scheduler) buildWithRetries(ctx context.Context, j *releaseJob, nodes []Node) ReleaseReport {
	var retries []Retry
	for _, n := range nodes {
		if s.nodeFailed(n.Name) {
			continue
		}
		slot := s.slots[n.Name]
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
			return s.notStarted(j, retries, "cancelled: "+ctx.Err().Error())
		}
		if s.stopped() {
			<-slot
			return s.notStarted(j, retries, s.earlierFailure())
		}
		if s.nodeFailed(n.Name) { // it failed while this release waited for a slot
			<-slot
			continue
		}
		rr, retry := s.try(ctx, n, j)
		// The slot is freed only once a failure has stopped the queue, so
		// no release starts after a failure without --continue-on-error.
		<-slot
		rr.Retries = retries
		if retry == nil {
			return rr
		}
		retries = append(retries, *retry)
	}
	rr := j.initialReport()
	rr.Outcome, rr.Retries = Failed, retries
	rr.Error = "no healthy BuildKit node left to build on: " + s.failedNodes()
	return rr
}

// try builds j on n. It returns the retry to record when n failed and the
// release may go on to the next node, or nil when rr is final.
func (s *scheduler) try(ctx context.Context, n Node, j *releaseJob) (ReleaseReport, *Retry) {
	rr, err := s.attempt(ctx, n, j)
	if err == nil {
		return rr, nil
	}
	down := s.nodeDown(ctx, n, err)
	if down {
		s.dropNode(n.Name, err)
	}
	s.mu.Lock()
	tried := s.attempts[j.release.Name]
	s.attempts[j.release.Name]++
	s.mu.Unlock()
	if down && tried < s.opts.retries {
		s.display.Logf("[%s] node %s failed (%v); retrying on another node", j.release.Name, n.Name, firstLine(err))
		return rr, &Retry{Node: n.Name, Reason: err.Error()}
	}
	s.display.Logf("[%s] FAILED on %s after %.1fs: %v", j.release.Name, n.Name, rr.DurationSeconds, firstLine(err))
	if !s.opts.continueOnError {
		s.mu.Lock()
		s.stop = true
		s.mu.Unlock()
	}
	return rr, nil
}

func (s *scheduler) notStarted(j *releaseJob, retries []Retry, why string) ReleaseReport {
	rr := j.initialReport()
	rr.Outcome, rr.Error, rr.Retries = Skipped, why, retries
	return rr
}

// earlierFailure is the error of a release that did not start because an
// earlier one failed, with the caller's advice.
func (s *scheduler) earlierFailure() string {
	msg := "not started: an earlier release failed"
	if a := s.opts.advice.ContinueOnError; a != "" {
		msg += " (" + a + ")"
	}
	return msg
}

func (s *scheduler) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop
}

func (s *scheduler) nodeFailed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.failed[name]
	return ok
}

func (s *scheduler) dropNode(name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed[name] = firstLine(err)
}

func (s *scheduler) failedNodes() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for n, why := range s.failed {
		parts = append(parts, n+" ("+why+")")
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// isNodeFailure tells a node that is gone (unreachable, daemon killed
// mid-build) from a build that failed on a healthy node: after an error that
// is not plainly the node's, it asks the node whether it still answers.
func isNodeFailure(ctx context.Context, n Node, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	if grpcerrors.Code(err) == codes.Unavailable {
		return true
	}
	pingCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, pingErr := n.Client.Info(pingCtx)
	return pingErr != nil
}

func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}
