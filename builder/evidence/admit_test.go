package evidence

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAdmitAccepts(t *testing.T) {
	m := testMatrix(t, t.TempDir())
	a, err := Admit(t.Context(), supported(t, nil), m, metadata(goldenDigest), goldenTime().Add(24*time.Hour), DefaultMaxAge)
	require.NoError(t, err)
	require.Equal(t, "jetpack6.2", a.Release.Name)
	require.Equal(t, Built{Release: "jetpack6.2", Digest: goldenDigest, Revision: goldenRevision, Source: "build.json"}, a.Built)
}

// TestAdmitRefuses gives each rule its own case and checks the reason and
// the message.
func TestAdmitRefuses(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name     string
		edit     func(ev *Evidence)
		resolver Resolver
		now      time.Time
		reason   Reason
		want     string
	}{
		{name: "wrong digest", resolver: metadata(otherDigest), reason: ReasonUnknownDigest,
			want: "evidence refused (unknown-digest): " + goldenDigest + " is not an image jetbake built for a release: build.json lists no image " + goldenDigest},
		{name: "wrong L4T", edit: func(ev *Evidence) { ev.Host.L4T, ev.Host.JetPack = "35.4.1", "5.1" }, reason: ReasonWrongL4T,
			want: `evidence refused (wrong-l4t): the host runs L4T "35.4.1" but release jetpack6.2 is for L4T 36.4.3; fix: probe on a Jetson flashed with L4T R36 (JetPack 6)`},
		{name: "failed check", edit: func(ev *Evidence) {
			setCheck(ev, "cuda-driver", Failed, "the CUDA driver did not answer: run --explain for its error")
		}, reason: ReasonFailedCheck,
			want: "evidence refused (failed-check): the probe's result is not a pass: failed cuda-driver (the CUDA driver did not answer: run --explain for its error)"},
		{name: "skipped check", edit: func(ev *Evidence) { setCheck(ev, "smoke", Skipped, "not run: add --smoke to run the chosen binary") },
			reason: ReasonSkippedCheck,
			want:   "evidence refused (skipped-check): the probe's result is not a pass: skipped smoke (not run: add --smoke to run the chosen binary); fix: a skipped check proves nothing"},
		{name: "older than the limit", now: goldenTime().Add(31 * day), reason: ReasonTooOld,
			want: "evidence refused (too-old): the evidence is from 2026-11-20, 31d old, more than the limit of 30d"},
		{name: "dated in the future", now: goldenTime().Add(-time.Hour), reason: ReasonFuture,
			want: "evidence refused (future): the evidence is dated 2026-11-20T09:30:00Z, after now (2026-11-20T08:30:00Z)"},
		{name: "generic arm64 is not enough: amd64", edit: func(ev *Evidence) { ev.Host.Architecture = "amd64" }, reason: ReasonNotArm64,
			want: "evidence refused (not-arm64): the probe ran on amd64"},
		{name: "no digest", edit: func(ev *Evidence) { ev.Image.Digest, ev.Image.DigestSource = "", "" }, reason: ReasonNoDigest,
			want: "evidence refused (no-digest): the evidence names no image digest"},
		{name: "release differs from the digest's", edit: func(ev *Evidence) { ev.Image.Release = "jetpack6.1" }, reason: ReasonWrongRelease,
			want: "evidence refused (wrong-release): the image description says release jetpack6.1 but " + goldenDigest + " was built for jetpack6.2"},
		{name: "digest of a release the matrix lacks", resolver: &MetadataResolver{File: "old.json", Report: renamed(metadata(goldenDigest), "jetpack9.9")},
			reason: ReasonWrongRelease, want: "was built for release jetpack9.9, which the matrix does not have"},
		{name: "device the release does not list", edit: func(ev *Evidence) { ev.Host.DeviceClass = "Jetson AGX Thor" }, reason: ReasonWrongDevice,
			want: `evidence refused (wrong-device): the host is a "Jetson AGX Thor", which release jetpack6.2 does not list in its hardware`},
		{name: "tag of a foreign registry", edit: func(ev *Evidence) {
			ev.Image.Tags = append(ev.Image.Tags, "registry.evil.example.com/alice/text-embeddings-router:1.8.2-jetpack6.2")
		}, reason: ReasonForeignTag,
			want: `evidence refused (foreign-tag): image.tags[1] "registry.evil.example.com/alice/text-embeddings-router:1.8.2-jetpack6.2" names the repository "registry.evil.example.com/alice/text-embeddings-router", not the matrix's ghcr.io/jetbake/text-embeddings-router; fix: probe an image built from this matrix`},
		{name: "revision differs from the image's", edit: func(ev *Evidence) { ev.Revision = "0123456789abcdef" }, reason: ReasonWrongRevision,
			want: "evidence refused (wrong-revision): the evidence's revision 0123456789abcdef is not " + goldenRevision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMatrix(t, t.TempDir())
			r, now := tt.resolver, tt.now
			if r == nil {
				r = metadata(goldenDigest)
			}
			if now.IsZero() {
				now = goldenTime().Add(time.Hour)
			}
			_, err := Admit(t.Context(), supported(t, tt.edit), m, r, now, DefaultMaxAge)
			var re *RefusedError
			require.True(t, errors.As(err, &re), "%v", err)
			require.Equal(t, tt.reason, re.Reason)
			require.ErrorContains(t, err, tt.want)
			require.NotEmpty(t, re.Fix)
		})
	}
}

// TestVerifyNotCurrent is the strict rule: evidence for another digest
// than the release's current one does not count.
func TestVerifyNotCurrent(t *testing.T) {
	m := testMatrix(t, t.TempDir())
	rel, _ := m.Release("jetpack6.2")
	err := Verify(supported(t, nil), rel, Built{Release: "jetpack6.2", Digest: otherDigest, Source: "build.json"}, goldenTime(), DefaultMaxAge)
	var re *RefusedError
	require.True(t, errors.As(err, &re))
	require.Equal(t, ReasonNotCurrent, re.Reason)
	require.ErrorContains(t, err, "the evidence is for "+goldenDigest+", not "+otherDigest+" (build.json)")
}

func TestAdmitResolverUnreachable(t *testing.T) {
	m := testMatrix(t, t.TempDir())
	r, err := NewRegistryResolver(m, "127.0.0.1:1/jetbake/tei")
	require.NoError(t, err)
	_, err = Admit(t.Context(), supported(t, nil), m, r, goldenTime(), DefaultMaxAge)
	require.ErrorContains(t, err, "cannot tell which release "+goldenDigest+" was built for: cannot look up 127.0.0.1:1/jetbake/tei@")
	var re *RefusedError
	require.False(t, errors.As(err, &re), "an unreachable registry is not a refusal")
}

// TestAdmitSupportedNeedsServing: for a release that claims "supported",
// evidence add refuses the smoke run alone and a kernel without serving,
// naming the level and what is missing; a candidate takes them.
func TestAdmitSupportedNeedsServing(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(ev *Evidence)
		level   Level
		missing string
	}{
		{name: "the smoke run alone", edit: func(*Evidence) {}, level: LevelSmoke, missing: "no passing cuda-kernel check, no passing serve check"},
		{name: "a kernel, no serving", level: LevelKernel, missing: "no passing serve check", edit: func(ev *Evidence) {
			ev.Result.Checks = ev.Result.Checks[:len(ev.Result.Checks)-1]
			ev.Result.Serve = nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := supported(t, tt.edit)
			if tt.level == LevelSmoke {
				ev = golden(t, nil)
			}
			require.Equal(t, tt.level, LevelOf(ev))
			m := testMatrix(t, t.TempDir())
			_, err := Admit(t.Context(), ev, m, metadata(goldenDigest), goldenTime().Add(time.Hour), DefaultMaxAge)
			var re *RefusedError
			require.True(t, errors.As(err, &re), "%v", err)
			require.Equal(t, ReasonBelowSupported, re.Reason)
			require.ErrorContains(t, err, "release jetpack6.2 claims tier supported, which needs evidence of level serve (passing cuda-kernel and serve checks), "+
				"but this evidence reached level "+string(tt.level)+" ("+tt.missing+")")
			require.Contains(t, re.Fix, "jetbake-probe --smoke --kernel --serve /model")

			rel, _ := m.Release("jetpack6.2")
			rel.Tier = "candidate"
			_, err = Admit(t.Context(), ev, m, metadata(goldenDigest), goldenTime().Add(time.Hour), DefaultMaxAge)
			require.NoError(t, err, "a candidate takes evidence of any level")
		})
	}
	require.Equal(t, LevelServe, LevelOf(supported(t, nil)))
	failed := supported(t, func(ev *Evidence) {
		setCheck(ev, "serve", Failed, "the router exited 1 before its health route answered")
	})
	require.Equal(t, LevelNone, LevelOf(failed))
}
