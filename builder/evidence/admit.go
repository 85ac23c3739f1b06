package evidence

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// DefaultMaxAge is how old evidence may be before it stops counting.
const DefaultMaxAge = 30 * 24 * time.Hour

// clockSkew is how far in the future evidence may be dated.
const clockSkew = 10 * time.Minute

// Reason names the rule that refused evidence.
type Reason string

// Reasons evidence is refused.
const (
	// ReasonFailedCheck: a check of the probe failed.
	ReasonFailedCheck Reason = "failed-check"
	// ReasonSkippedCheck: a check of the probe was skipped, which proves nothing.
	ReasonSkippedCheck Reason = "skipped-check"
	// ReasonNotArm64: the probe ran on another architecture.
	ReasonNotArm64 Reason = "not-arm64"
	// ReasonNoDigest: the evidence names no image digest.
	ReasonNoDigest Reason = "no-digest"
	// ReasonUnknownDigest: jetbake did not build the digest for any release.
	ReasonUnknownDigest Reason = "unknown-digest"
	// ReasonWrongRelease: the evidence's release is not the digest's, or not in the matrix.
	ReasonWrongRelease Reason = "wrong-release"
	// ReasonWrongL4T: the host's L4T major is not the release's.
	ReasonWrongL4T Reason = "wrong-l4t"
	// ReasonWrongDevice: the device class is not in the release's hardware.
	ReasonWrongDevice Reason = "wrong-device"
	// ReasonWrongRevision: the evidence's revision is not the image's.
	ReasonWrongRevision Reason = "wrong-revision"
	// ReasonTooOld: the evidence is older than the age limit.
	ReasonTooOld Reason = "too-old"
	// ReasonFuture: the evidence is dated in the future.
	ReasonFuture Reason = "future"
	// ReasonNotCurrent: the evidence is for another digest than the release's current one.
	ReasonNotCurrent Reason = "not-current"
	// ReasonForeignTag: a tag of the evidence names another repository than the matrix's.
	ReasonForeignTag Reason = "foreign-tag"
	// ReasonBelowSupported: the release claims "supported", but the
	// evidence lacks a passing cuda-kernel or serve check (LevelServe).
	ReasonBelowSupported Reason = "below-supported"
	// ReasonWrongKind: the evidence is of an app image and the matrix
	// builds a router, or the other way round.
	ReasonWrongKind Reason = "wrong-kind"
)

// RefusedError says why evidence does not count and what to do.
type RefusedError struct {
	// Reason names the rule.
	Reason Reason
	// Message says what was found.
	Message string
	// Fix says what to do.
	Fix string
}

// Error writes "evidence refused (wrong-l4t): message; fix: fix".
func (e *RefusedError) Error() string {
	return "evidence refused (" + string(e.Reason) + "): " + e.Message + "; fix: " + e.Fix
}

// refuse builds a *RefusedError.
func refuse(reason Reason, fix, format string, args ...any) error {
	return &RefusedError{Reason: reason, Message: fmt.Sprintf(format, args...), Fix: fix}
}

// ProbeCommand is the probe run that collects evidence of every level,
// inside the image on a Jetson with a model folder mounted at /model.
const ProbeCommand = "jetbake-probe --smoke --kernel --serve /model --out evidence.json"

// AppProbeCommand is the probe run that collects evidence of every level
// for an app image: the app check runs by itself in an app image.
const AppProbeCommand = "jetbake-probe --smoke --kernel --out evidence.json"

// appProbeFix is the fix of an app's evidence below its supported level.
const appProbeFix = "run '" + AppProbeCommand + "' in the image on a Jetson with --runtime nvidia and add that evidence"

// probeFix is the advice for evidence that does not prove the image.
const probeFix = "run '" + ProbeCommand + "' inside the image on a Jetson (a small embedding model's folder mounted at /model), " +
	"with JETBAKE_IMAGE_DIGEST set to the digest it was pulled by"

// appProbeFixAll is probeFix for an app's evidence: no model, the app
// check runs by itself.
const appProbeFixAll = "run '" + AppProbeCommand + "' inside the image on a Jetson with --runtime nvidia, " +
	"with JETBAKE_IMAGE_DIGEST set to the digest it was pulled by"

// probeFixOf is the advice for evidence of ev's kind that does not prove
// the image.
func probeFixOf(ev *Evidence) string {
	if ev.Image.Kind == evidencespec.KindApp {
		return appProbeFixAll
	}
	return probeFix
}

// Admitted is evidence that Admit accepted, with the image it is for.
type Admitted struct {
	// Evidence is the evidence.
	Evidence *Evidence
	// Release is the matrix release of the image.
	Release *matrix.Release
	// Built is what the resolver knows of the image.
	Built Built
}

// Admit checks evidence against the matrix, the image the resolver knows
// for its digest, and the age limit at now. It returns a *RefusedError for
// evidence that does not count, or another error when the resolver could
// not tell (a registry out of reach). Admitted evidence carries the
// image's build-time audit per SM (Built.Audit) in place of any it had.
func Admit(ctx context.Context, ev *Evidence, m *matrix.Matrix, r Resolver, now time.Time, maxAge time.Duration) (*Admitted, error) {
	if err := checkResult(ev); err != nil {
		return nil, err
	}
	if err := checkKind(ev, m); err != nil {
		return nil, err
	}
	if err := checkTags(ev, m.Image.Repository); err != nil {
		return nil, err
	}
	if ev.Image.Digest == "" {
		return nil, refuse(ReasonNoDigest, probeFixOf(ev), "the evidence names no image digest (image.digest is empty)")
	}
	built, err := r.Lookup(ctx, ev.Image.Digest)
	if errors.Is(err, ErrNotFound) {
		return nil, refuse(ReasonUnknownDigest,
			"probe an image that 'jetbake build' produced, and read its report with a MetadataResolver or let jetbake reach the registry",
			"%s is not an image jetbake built for a release: %v", ev.Image.Digest, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot tell which release %s was built for: %w", ev.Image.Digest, err)
	}
	rel, ok := m.Release(built.Release)
	if !ok {
		return nil, refuse(ReasonWrongRelease, "add the release back to the matrix, or probe an image of a release it has",
			"%s was built for release %s, which the matrix does not have (it has %s)",
			ev.Image.Digest, built.Release, strings.Join(m.ReleaseNames(), ", "))
	}
	if err := Verify(ev, rel, built, now, maxAge); err != nil {
		return nil, err
	}
	// The record carries the build-time audit of the image, per SM, as
	// jetbake knows it: never what the file brought.
	ev.Audit = built.Audit
	return &Admitted{Evidence: ev, Release: rel, Built: built}, nil
}

// Verify applies the rules that need no lookup: a passing result on arm64,
// for the release and revision of built, on a host with the release's L4T
// major and a device class among its hardware, no older than maxAge at
// now, and of SupportedLevel for a release that claims "supported".
func Verify(ev *Evidence, rel *matrix.Release, built Built, now time.Time, maxAge time.Duration) error {
	if err := checkResult(ev); err != nil {
		return err
	}
	if ev.Image.Digest != built.Digest {
		return refuse(ReasonNotCurrent, probeFixOf(ev)+" of "+built.Digest,
			"the evidence is for %s, not %s (%s)", ev.Image.Digest, built.Digest, built.Source)
	}
	if ev.Image.Release != "" && ev.Image.Release != built.Release {
		return refuse(ReasonWrongRelease, probeFixOf(ev),
			"the image description says release %s but %s was built for %s", ev.Image.Release, ev.Image.Digest, built.Release)
	}
	if ev.Revision != "" && built.Revision != "" && ev.Revision != built.Revision {
		return refuse(ReasonWrongRevision, probeFixOf(ev),
			"the evidence's revision %s is not %s, the revision %s was built from", ev.Revision, built.Revision, ev.Image.Digest)
	}
	if err := checkHost(ev, rel); err != nil {
		return err
	}
	if err := checkAge(ev, now, maxAge); err != nil {
		return err
	}
	return checkLevel(ev, rel)
}

// checkLevel refuses, for a release that claims "supported", evidence
// below SupportedLevel: the smoke run (--version) never touches CUDA, and
// TEI checks the compute capability and loads its kernels only at model
// load.
func checkLevel(ev *Evidence, rel *matrix.Release) error {
	need := SupportedLevelFor(ev)
	if rel.Tier != TierSupported || LevelOf(ev) == need {
		return nil
	}
	if need == LevelApp {
		return refuse(ReasonBelowSupported, appProbeFix+"; or set the release's tier to \"candidate\", which this evidence may back",
			"release %s claims tier supported, which for an app needs evidence of level %s (passing cuda-kernel and app checks: "+
				"torch found CUDA and the Jetson's GPU, and a CUDA matrix product was finite), but this evidence reached level %s (%s)",
			rel.Name, need, LevelOf(ev), Missing(ev))
	}
	return refuse(ReasonBelowSupported, probeFix+"; or set the release's tier to \"candidate\", which this evidence may back",
		"release %s claims tier supported, which needs evidence of level %s (passing cuda-kernel and serve checks), but this evidence reached level %s (%s)",
		rel.Name, need, LevelOf(ev), Missing(ev))
}

// checkKind refuses evidence of an image of another kind than the
// matrix's: a router's evidence proves nothing of an app's torch, and an
// app's would let a router's release be supported with no serve check.
func checkKind(ev *Evidence, m *matrix.Matrix) error {
	kind, want := matrix.KindRouter, m.Kind()
	if ev.Image.Kind == evidencespec.KindApp {
		kind = matrix.KindApp
	}
	if kind == want {
		return nil
	}
	fix := "run '" + ProbeCommand + "' inside an image this matrix built"
	if want == matrix.KindApp {
		fix = "run '" + AppProbeCommand + "' inside an image this matrix built"
	}
	return refuse(ReasonWrongKind, fix, "the evidence is of %s image (image.kind %q) but the matrix builds %s images",
		article(kind), ev.Image.Kind, want)
}

// article writes "an app" or "a router".
func article(kind string) string {
	if kind == matrix.KindApp {
		return "an " + kind
	}
	return "a " + kind
}

// checkTags refuses evidence whose tags name another repository than the
// matrix's: the image description of an image built from the matrix holds
// only its own tags, and a foreign registry host has no place in evidence
// that is published.
func checkTags(ev *Evidence, repository string) error {
	for i, tag := range ev.Image.Tags {
		repo := tag[:max(strings.LastIndexByte(tag, ':'), 0)]
		if repo != repository {
			return refuse(ReasonForeignTag, "probe an image built from this matrix, whose tags name "+repository,
				"image.tags[%d] %s names the repository %s, not the matrix's %s", i, computecap.QuoteShort(tag), computecap.QuoteShort(repo), repository)
		}
	}
	return nil
}

// checkResult refuses a result with a failed or skipped check, or not on arm64.
func checkResult(ev *Evidence) error {
	var failed, skipped []string
	for _, c := range ev.Result.Checks {
		switch c.Status {
		case Failed:
			failed = append(failed, c.Name+" ("+c.Detail+")")
		case Skipped:
			skipped = append(skipped, c.Name+" ("+c.Detail+")")
		}
	}
	switch {
	case len(failed) > 0:
		return refuse(ReasonFailedCheck, "fix what the failed checks say and probe again",
			"the probe's result is not a pass: failed %s", strings.Join(failed, ", "))
	case len(skipped) > 0:
		return refuse(ReasonSkippedCheck, "a skipped check proves nothing: "+probeFixOf(ev),
			"the probe's result is not a pass: skipped %s", strings.Join(skipped, ", "))
	case !ev.Result.Pass:
		return refuse(ReasonFailedCheck, probeFixOf(ev), "the probe's result is not a pass")
	case ev.Host.Architecture != "arm64":
		return refuse(ReasonNotArm64, probeFixOf(ev), "the probe ran on %s: a build host proves nothing, only a Jetson does", ev.Host.Architecture)
	}
	return nil
}

// checkHost refuses a host with another L4T major or a device class that
// the release does not list.
func checkHost(ev *Evidence, rel *matrix.Release) error {
	want, _, _ := strings.Cut(rel.L4T, ".")
	got, _, _ := strings.Cut(ev.Host.L4T, ".")
	if got == "" || got != want {
		jp := ""
		if n, err := strconv.Atoi(want); err == nil {
			if s, ok := computecap.JetPackForL4T(n); ok {
				jp = " (JetPack " + s + ")"
			}
		}
		return refuse(ReasonWrongL4T, "probe on a Jetson flashed with L4T R"+want+jp,
			"the host runs L4T %q but release %s is for L4T %s", ev.Host.L4T, rel.Name, rel.L4T)
	}
	if !slices.Contains(rel.Hardware, ev.Host.DeviceClass) {
		return refuse(ReasonWrongDevice, "probe on one of "+strings.Join(rel.Hardware, ", ")+", or add the module to the release's hardware",
			"the host is a %q, which release %s does not list in its hardware", ev.Host.DeviceClass, rel.Name)
	}
	return nil
}

// checkAge refuses evidence older than maxAge or dated in the future.
func checkAge(ev *Evidence, now time.Time, maxAge time.Duration) error {
	at := ev.At()
	age := now.Sub(at)
	switch {
	case age < -clockSkew:
		return refuse(ReasonFuture, "check the Jetson's clock and probe again",
			"the evidence is dated %s, after now (%s)", at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case age > maxAge:
		return refuse(ReasonTooOld, probeFixOf(ev)+" again",
			"the evidence is from %s, %s old, more than the limit of %s", at.UTC().Format(time.DateOnly), FormatAge(age), FormatAge(maxAge))
	}
	return nil
}
