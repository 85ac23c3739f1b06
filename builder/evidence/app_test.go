package evidence

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// appEvidence is the serving evidence as an app image's probe writes it:
// image.kind "app" and, in place of the serve check, the app check with
// detail (passed when status is Passed).
func appEvidence(t *testing.T, status Status, detail string, keepServe bool) *Evidence {
	t.Helper()
	return supported(t, func(ev *Evidence) {
		ev.Image.Kind = evidencespec.KindApp
		if !keepServe {
			ev.Result.Checks = slices.DeleteFunc(ev.Result.Checks, func(c Check) bool { return c.Name == evidencespec.CheckServe })
			ev.Result.Serve = nil
		}
		if detail != "" {
			ev.Result.Checks = append(ev.Result.Checks, Check{Name: evidencespec.CheckApp, Status: status, Detail: detail})
			ev.Result.Pass = status == Passed
		}
	})
}

const appPassed = "torch for CUDA 12.6 sees the Jetson Orin GPU (SM 8.7) and a CUDA matrix product on it is finite"

func TestAppEvidenceIsSupportedWithItsAppCheck(t *testing.T) {
	ev := appEvidence(t, Passed, appPassed, false)
	require.Equal(t, LevelApp, LevelOf(ev))
	m := testMatrix(t, t.TempDir())
	_, err := Admit(t.Context(), ev, m, metadata(goldenDigest), goldenTime().Add(time.Hour), DefaultMaxAge)
	require.NoError(t, err)
}

// TestAppEvidenceWithoutAPassingAppCheckIsNotSupported: an app's evidence
// needs its app check, whatever else passed (a serve check proves nothing
// of torch), and the refusal says so.
func TestAppEvidenceWithoutAPassingAppCheckIsNotSupported(t *testing.T) {
	ev := appEvidence(t, "", "", true)
	require.Equal(t, LevelKernel, LevelOf(ev), "serve is not an app's level")
	m := testMatrix(t, t.TempDir())
	_, err := Admit(t.Context(), ev, m, metadata(goldenDigest), goldenTime().Add(time.Hour), DefaultMaxAge)
	var re *RefusedError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, ReasonBelowSupported, re.Reason)
	require.ErrorContains(t, err, "release jetpack6.2 claims tier supported, which for an app needs evidence of level app (passing cuda-kernel "+
		"and app checks: torch found CUDA and the Jetson's GPU, and a CUDA matrix product was finite), but this evidence reached level "+
		"cuda-kernel (no passing app check)")
	require.Contains(t, re.Fix, "jetbake-probe --smoke --kernel --out evidence.json")

	failed := appEvidence(t, Failed, "a CUDA matrix product failed: "+evidencespec.AppError("CUDA error: no kernel image is available for execution on the device"), false)
	require.Equal(t, LevelNone, LevelOf(failed))
}

func TestEvidenceKindIsAppOrNothing(t *testing.T) {
	ev := appEvidence(t, Passed, appPassed, false)
	ev.Image.Kind = "router"
	data, err := ev.Marshal()
	require.NoError(t, err)
	_, err = Parse(data)
	require.ErrorContains(t, err, `image.kind: "router": is not "app": the probe writes it for an app image only`)
}
