package evidence

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// appEvidence is the serving evidence as an app image's probe writes it:
// image.kind "app" and, in place of the serve check, the app check with
// detail (passed when status is Passed).
func appEvidence(t *testing.T, status Status, detail string, keepServe bool) *Evidence {
	t.Helper()
	return supported(t, func(ev *Evidence) {
		ev.Image.Kind = evidencespec.KindApp
		ev.Image.Tags = []string{appRepository + ":0.1.0-jetpack6.2"}
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

// appRepository is the image repository of appMatrix.
const appRepository = "ghcr.io/acme/obliteratus"

// appMatrix is an app's matrix (as init --app pytorch writes it), with
// jetpack6.2 claiming "supported", in dir.
func appMatrix(t *testing.T, dir string) *matrix.Matrix {
	t.Helper()
	m, err := matrix.Parse([]byte(`{
  "app": {"name": "obliteratus", "version": "0.1.0", "framework": "pytorch", "context": ".", "dockerfile": "Dockerfile",
           "command": ["/opt/venv/bin/obliteratus"]},
  "image": {"repository": "` + appRepository + `", "source": "https://github.com/acme/obliteratus", "tags": ["{version}-jetpack{jetpack}"]},
  "releases": [
    {"name": "jetpack6.2", "jetpack": "6.2", "l4t": "36.4.3", "cuda": "12.9", "ubuntu": "24.04",
     "base": "nvcr.io/nvidia/pytorch:25.06-py3-igpu", "targets": ["8.7"], "tier": "supported",
     "hardware": ["Jetson AGX Orin", "Jetson Orin Nano Super"]},
    {"name": "jetpack7.0", "jetpack": "7.0", "l4t": "38.2.0", "cuda": "13.0", "ubuntu": "24.04",
     "base": "nvcr.io/nvidia/pytorch:25.08-py3", "targets": ["11.0"], "tier": "candidate", "hardware": ["Jetson AGX Thor"]}
  ]
}`))
	require.NoError(t, err)
	require.Equal(t, matrix.KindApp, m.Kind())
	m.Dir = dir
	return m
}

// storeEvidence stores ev for m's jetpack6.2 as Admit would.
func storeEvidence(t *testing.T, m *matrix.Matrix, ev *Evidence) {
	t.Helper()
	rel, _ := m.Release("jetpack6.2")
	_, err := StoreFor(m).Add(&Admitted{Evidence: ev, Release: rel, Built: Built{Release: rel.Name, Digest: ev.Image.Digest}})
	require.NoError(t, err)
}

func TestAppEvidenceIsSupportedWithItsAppCheck(t *testing.T) {
	ev := appEvidence(t, Passed, appPassed, false)
	require.Equal(t, LevelApp, LevelOf(ev))
	m := appMatrix(t, t.TempDir())
	_, err := Admit(t.Context(), ev, m, metadata(goldenDigest), goldenTime().Add(time.Hour), DefaultMaxAge)
	require.NoError(t, err)
}

// TestAppEvidenceWithoutAPassingAppCheckIsNotSupported: an app's evidence
// needs its app check, whatever else passed (a serve check proves nothing
// of torch), and the refusal says so.
func TestAppEvidenceWithoutAPassingAppCheckIsNotSupported(t *testing.T) {
	ev := appEvidence(t, "", "", true)
	require.Equal(t, LevelKernel, LevelOf(ev), "serve is not an app's level")
	m := appMatrix(t, t.TempDir())
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

// TestEvidenceKindMustBeTheMatrixs: evidence of an app image is refused
// for a router's matrix, and a router's for an app's, in one sentence
// with the probe run of the matrix's kind; stored evidence of the other
// kind does not back a supported release either.
func TestEvidenceKindMustBeTheMatrixs(t *testing.T) {
	now := goldenTime().Add(time.Hour)
	app := appEvidence(t, Passed, appPassed, false)
	router := testMatrix(t, t.TempDir())
	_, err := Admit(t.Context(), app, router, metadata(goldenDigest), now, DefaultMaxAge)
	require.EqualError(t, err, `evidence refused (wrong-kind): the evidence is of an app image (image.kind "app") but the matrix `+
		`builds router images; fix: run 'jetbake-probe --smoke --kernel --serve /model --out evidence.json' inside an image this matrix built`)

	_, err = Admit(t.Context(), supported(t, nil), appMatrix(t, t.TempDir()), metadata(goldenDigest), now, DefaultMaxAge)
	require.EqualError(t, err, `evidence refused (wrong-kind): the evidence is of a router image (image.kind "") but the matrix `+
		`builds app images; fix: run 'jetbake-probe --smoke --kernel --out evidence.json' inside an image this matrix built`)

	// Stored before the rule: an app's passing evidence, with no serve
	// check, does not back the router's supported release.
	storeEvidence(t, router, app)
	errs := CheckStrict(t.Context(), router, WithResolver(metadata(goldenDigest)), WithNow(now))
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Message, "(wrong-kind: the evidence is of an app image")
	table, err := Support(t.Context(), router, WithResolver(metadata(goldenDigest)), WithNow(now))
	require.NoError(t, err)
	require.False(t, *table.Releases[2].Evidence[0].Counts)
}

// TestCheckStrictApp: an app's supported release without evidence is
// told to run the app's probe: no model, no --serve.
func TestCheckStrictApp(t *testing.T) {
	now := goldenTime().Add(time.Hour)
	m := appMatrix(t, t.TempDir())
	errs := CheckStrict(t.Context(), m, WithResolver(metadata(goldenDigest)), WithNow(now))
	require.Equal(t, []matrix.FieldError{{Path: "releases[0].tier", Value: `"supported"`,
		Message: "release jetpack6.2 claims supported without passing evidence for its current image " + goldenDigest +
			" (build.json) no older than 30d: there is no evidence for the release",
		Fix: "run 'jetbake-probe --smoke --kernel --out evidence.json' in that image on a Jetson with --runtime nvidia (the app check " +
			"runs by itself in an app image), then 'jetbake evidence add evidence.json' (supported needs its cuda-kernel and app checks); " +
			"or set the tier to \"candidate\""}}, errs)

	storeEvidence(t, m, appEvidence(t, Passed, appPassed, false))
	require.Empty(t, CheckStrict(t.Context(), m, WithResolver(metadata(goldenDigest)), WithNow(now)))
}

// TestSupportApp: support shows an app's evidence at level app, and says
// that level is what its supported releases need.
func TestSupportApp(t *testing.T) {
	m := appMatrix(t, t.TempDir())
	storeEvidence(t, m, appEvidence(t, Passed, appPassed, false))
	table, err := Support(t.Context(), m, WithResolver(metadata(goldenDigest)), WithNow(goldenTime().Add(time.Hour)))
	require.NoError(t, err)

	var text bytes.Buffer
	require.NoError(t, table.WriteText(&text))
	require.Equal(t, ""+
		"jetpack6.2  supported  JetPack 6.2 (L4T 36.4.3): Jetson AGX Orin, Jetson Orin Nano Super\n"+
		"    Jetson Orin Nano Super, 2026-11-20, sha256:c2efadaaded6, rev 677e5d8f2a41, level app (counts)\n"+
		"jetpack7.0  candidate  JetPack 7.0 (L4T 38.2.0): Jetson AGX Thor\n"+
		"    no evidence\n", text.String())

	var md bytes.Buffer
	require.NoError(t, table.WriteMarkdown(&md))
	require.Contains(t, md.String(), "| jetpack6.2 | 6.2 (36.4.3) | supported | Jetson AGX Orin, Jetson Orin Nano Super | "+
		"Jetson Orin Nano Super, 2026-11-20, `sha256:c2efadaaded6`, rev `677e5d8f2a41`, level app (counts) |\n")
	require.Contains(t, md.String(), "for a supported release it must reach level app (a CUDA kernel ran and the app check passed: "+
		"torch found CUDA and the Jetson's GPU, and a CUDA matrix product was finite).\n")
	require.NotContains(t, md.String(), "router")

	var js bytes.Buffer
	require.NoError(t, table.WriteJSON(&js))
	require.Contains(t, js.String(), `"kind": "app"`)
	router, err := Support(t.Context(), testMatrix(t, t.TempDir()))
	require.NoError(t, err)
	js.Reset()
	require.NoError(t, router.WriteJSON(&js))
	require.NotContains(t, js.String(), `"kind"`, "a router's table is as it was")
}

// TestIssueMarkdownApp: an app's report shows its app check where a
// router's shows its serving run, and the level in an app's words.
func TestIssueMarkdownApp(t *testing.T) {
	body, err := IssueMarkdown(appEvidence(t, Passed, appPassed, false))
	require.NoError(t, err)
	require.Contains(t, body, "| CUDA kernel | 4096 values exact on SM 8.7")
	require.Contains(t, body, "| App check | ✅ passed: "+appPassed+" |\n")
	require.Contains(t, body, "| Level | app: a CUDA kernel ran and the app's torch computed on the GPU: enough for supported |\n")
	require.Contains(t, body, "| app | ✅ passed | "+appPassed+" |\n")
	require.NotContains(t, body, "| Serving |")

	failed, err := IssueMarkdown(appEvidence(t, Failed, "torch's device 0 is not a Jetson GPU", false))
	require.NoError(t, err)
	require.Contains(t, failed, "| App check | ❌ failed: torch's device 0 is not a Jetson GPU |\n")
	require.Contains(t, failed, "| Level | none: not a pass |\n")

	// Without --kernel the app check still ran torch on the GPU.
	ev := appEvidence(t, Passed, appPassed, false)
	ev.Result.Checks = slices.DeleteFunc(ev.Result.Checks, func(c Check) bool { return c.Name == evidencespec.CheckCUDAKernel })
	ev.Result.Kernel = nil
	noKernel, err := IssueMarkdown(ev)
	require.NoError(t, err)
	require.Contains(t, noKernel, "| Level | smoke: the image starts and the app's torch computed on the GPU; "+
		"the cuda-kernel check did not run (add --kernel) |\n")
}
