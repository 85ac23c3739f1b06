package imagebuild

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/builder/imagebuild/verdicts"
	"github.com/jetbake/jetbake/builder/matrix"
)

// A release that passed remembers its verdict; the next build with the
// same key gets the annotation and the report's findings back, says so
// once and counts the smoke run as cached. A release built with no-cache
// neither reads nor writes the store; an entry whose data is no release's
// verdict is ignored with a warning.
func TestRememberAndRecallVerdict(t *testing.T) {
	dir := t.TempDir()
	p := testPlan()
	newJob := func(o *options) (*releaseJob, *[]string, *[]string) {
		j := &releaseJob{plan: p, release: p.Releases[0], opts: o}
		j.timings = progress.NewRecorder()
		var said, warned []string
		j.say = func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }
		j.warn = func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }
		return j, &said, &warned
	}
	o := &options{verdictDir: dir, tool: "jetbake test"}
	key := verdicts.Inputs{Tool: o.tool, CUDA: p.Releases[0].CUDA}.Key()
	store := verdicts.Store{Dir: dir}

	first, said, warned := newJob(o)
	_, ok := first.recall(store, key, time.Now())
	require.False(t, ok, "nothing remembered yet")
	bins := []smoke.Binary{{Binary: "router-87", SM: "8.7", Needed: []string{"libc.so.6"},
		Resolved: []smoke.Library{{Name: "libc.so.6", Path: "/usr/lib/aarch64-linux-gnu/libc.so.6"}}}}
	audit := make([]buildaudit.Audit, len(first.release.Targets))
	for i, tg := range first.release.Targets {
		audit[i] = buildaudit.Audit{SM: tg.SM, Verdict: "runs"}
	}
	first.binaries, first.audit = bins, audit
	first.annotations = map[string]string{matrix.KeyAudit: "8.7=runs"}
	first.rememberVerdict()
	require.Empty(t, *said)
	require.Empty(t, *warned)

	second, said, warned := newJob(o)
	annotation, ok := second.recall(store, key, time.Now())
	require.True(t, ok)
	require.Equal(t, "8.7=runs", annotation)
	require.Empty(t, *warned)
	require.Len(t, *said, 1)
	require.Regexp(t, `^\[jetpack6\.2\] smoke and audit: remembered from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(`+key[:12]+`\)$`, (*said)[0])
	rr := second.initialReport()
	require.Equal(t, bins, rr.Binaries)
	require.Equal(t, audit, rr.Audit)
	require.Equal(t, key, rr.Remembered.Key)
	smokePhase, _ := second.timings.Result().Phase(progress.PhaseSmoke)
	require.Equal(t, smokePhase.Steps, smokePhase.Cached)
	second.rememberVerdict() // a remembered verdict is not written again
	second.resetFindings()
	require.Nil(t, second.initialReport().Remembered, "a retry finds its verdict anew")

	noCache := &options{verdictDir: dir, tool: o.tool, controls: Controls{NoCache: true}}
	j, _, _ := newJob(noCache)
	require.Empty(t, j.verdictStore().Dir, "--no-cache runs the smoke run and the audit")
	j, _, _ = newJob(&options{tool: o.tool})
	require.Empty(t, j.verdictStore().Dir, "no store: WithVerdicts not given (no --remember-verdicts)")

	// A failed release (no audit annotation) remembers nothing.
	failed, _, _ := newJob(o)
	failed.verdictKey = verdicts.Inputs{Tool: "failed"}.Key()
	failed.rememberVerdict()
	_, err := os.Stat(filepath.Join(dir, failed.verdictKey+".json"))
	require.ErrorIs(t, err, os.ErrNotExist)

	// An entry that is a verdict, but not of this release's targets.
	other := verdicts.Inputs{Tool: "other"}.Key()
	require.NoError(t, store.Save(other, []byte(`{"annotation":"x","audit":[]}`), time.Now()))
	third, said, warned := newJob(o)
	_, ok = third.recall(store, other, time.Now())
	require.False(t, ok)
	require.Empty(t, *said)
	require.Len(t, *warned, 1)
	require.Contains(t, (*warned)[0], "ignoring the remembered verdict "+other[:12])
}
