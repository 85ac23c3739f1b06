package imagebuild

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/plan"
)

// fakeCluster runs the scheduler with a fake attempt: builds on a node in
// down fail as a dead node would, builds of a release in broken fail as a
// build would, everything else succeeds.
type fakeCluster struct {
	down   map[string]bool
	broken map[string]bool

	mu       sync.Mutex
	started  []string // "release@node", in order
	afterBad []string // releases started after a build failure was returned
	badSeen  bool
}

func (f *fakeCluster) run(t *testing.T, nodes []string, releases []string, parallel, retries int, continueOnError bool) *Report {
	t.Helper()
	p := &plan.Plan{}
	for _, r := range releases {
		p.Releases = append(p.Releases, plan.Release{Name: r})
	}
	var ns []Node
	for _, n := range nodes {
		ns = append(ns, Node{Name: n})
	}
	s := &scheduler{
		nodes: ns, opts: &options{retries: retries, continueOnError: continueOnError, advice: Advice{ContinueOnError: "build every release"}}, display: &progress.Display{},
		slots: map[string]chan struct{}{}, failed: map[string]string{}, attempts: map[string]int{},
		nodeDown: func(_ context.Context, n Node, _ error) bool { return f.down[n.Name] },
		attempt:  f.attempt,
	}
	for _, n := range ns {
		s.slots[n.Name] = make(chan struct{}, parallel)
	}
	report := &Report{}
	var jobs []*releaseJob
	for _, rel := range p.Releases {
		jobs = append(jobs, &releaseJob{opts: &options{}, plan: p, release: rel})
		report.Releases = append(report.Releases, ReleaseReport{})
	}
	s.run(t.Context(), jobs, report)
	return report
}

func (f *fakeCluster) attempt(_ context.Context, n Node, j *releaseJob) (ReleaseReport, error) {
	f.mu.Lock()
	f.started = append(f.started, j.release.Name+"@"+n.Name)
	if f.badSeen {
		f.afterBad = append(f.afterBad, j.release.Name)
	}
	f.mu.Unlock()
	rr := ReleaseReport{Name: j.release.Name, Node: n.Name}
	switch {
	case f.down[n.Name]:
		rr.Outcome, rr.Error = Failed, "connection refused"
		return rr, errors.New("connection refused")
	case f.broken[j.release.Name]:
		f.mu.Lock()
		f.badSeen = true
		f.mu.Unlock()
		rr.Outcome, rr.Error = Failed, `process "/bin/sh -c make" did not complete successfully: exit code: 2`
		return rr, errors.New(rr.Error)
	}
	rr.Outcome, rr.Digest = Succeeded, "sha256:"+j.release.Name
	return rr, nil
}

var fourReleases = []string{"jetpack5.1", "jetpack6.1", "jetpack6.2", "jetpack7.2"}

func TestSchedulerMovesReleasesOffADeadNode(t *testing.T) {
	f := &fakeCluster{down: map[string]bool{"node-b": true}}
	report := f.run(t, []string{"node-a", "node-b"}, fourReleases, 1, 2, false)
	retried := 0
	for _, rr := range report.Releases {
		require.Equal(t, Succeeded, rr.Outcome, rr.Name)
		require.Equal(t, "node-a", rr.Node)
		if len(rr.Retries) > 0 {
			require.Equal(t, "node-b", rr.Retries[0].Node)
			require.Equal(t, "connection refused", rr.Retries[0].Reason)
			retried++
		}
	}
	require.Positive(t, retried)
	require.LessOrEqual(t, retried, 2, "node-b is dropped after its first failure; at most the releases already waiting on it retry")
}

func TestSchedulerDoesNotRetryABuildError(t *testing.T) {
	f := &fakeCluster{broken: map[string]bool{"jetpack6.1": true}}
	report := f.run(t, []string{"node-a", "node-b"}, fourReleases, 1, 2, true)
	for _, rr := range report.Releases {
		if rr.Name == "jetpack6.1" {
			require.Equal(t, Failed, rr.Outcome)
			require.Empty(t, rr.Retries, "a build error on a healthy node is not retried")
			continue
		}
		require.Equal(t, Succeeded, rr.Outcome, "--continue-on-error builds the rest")
	}
}

func TestSchedulerStopsStartingAfterAFailure(t *testing.T) {
	for range 20 { // the goroutines race for the slot; the rule must hold in every order
		f := &fakeCluster{broken: map[string]bool{"jetpack6.1": true}}
		report := f.run(t, []string{"node-a"}, fourReleases, 1, 2, false)
		require.Empty(t, f.afterBad, "no release starts after a failure without --continue-on-error")
		for _, rr := range report.Releases {
			require.Contains(t, []Outcome{Succeeded, Failed, Skipped}, rr.Outcome)
			if rr.Outcome == Skipped {
				require.Equal(t, "not started: an earlier release failed (build every release)", rr.Error, "with the caller's advice")
			}
		}
	}
}

func TestSchedulerRetriesAreBounded(t *testing.T) {
	f := &fakeCluster{down: map[string]bool{"a": true, "b": true, "c": true}}
	report := f.run(t, []string{"a", "b", "c"}, []string{"jetpack6.2"}, 1, 1, true)
	rr := report.Releases[0]
	require.Equal(t, Failed, rr.Outcome)
	require.Len(t, rr.Retries, 1, "--retries 1: one retry, then the release fails")
	require.Len(t, f.started, 2)
}
