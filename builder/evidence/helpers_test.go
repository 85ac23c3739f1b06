package evidence

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/matrix"
)

// The entrypoint's golden probe output, and what it holds.
const (
	goldenFile     = "../../entrypoint/testdata/probe/orin-nano-jp6-pass.json"
	goldenDigest   = "sha256:c2efadaaded60d602d1449d0432fe96f50982be593ee63a57a6d330dc8181799"
	goldenRevision = "677e5d8f2a41c0b9e6d3f1a2b4c5d6e7f8091a2b"
	otherDigest    = "sha256:3bfcb1f42ae944118cfffba59c059f10ac8b96060bd8a41af56b6f94ce3936d0"
)

// goldenTime is when the golden probe ran.
func goldenTime() time.Time { return time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC) }

// goldenBytes reads the entrypoint's golden evidence.
func goldenBytes(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(goldenFile)
	require.NoError(t, err)
	return data
}

// golden parses the entrypoint's golden evidence, changed by edit and
// written and parsed again, so that every case is valid evidence.
func golden(t testing.TB, edit func(ev *Evidence)) *Evidence {
	t.Helper()
	return parsed(t, goldenBytes(t), edit)
}

// parsed parses data, changed by edit and written and parsed again.
func parsed(t testing.TB, data []byte, edit func(ev *Evidence)) *Evidence {
	t.Helper()
	ev, err := Parse(data)
	require.NoError(t, err)
	if edit == nil {
		return ev
	}
	edit(ev)
	// The probe writes the device class into its check too.
	for i, c := range ev.Result.Checks {
		if c.Name == "device-class" && strings.HasPrefix(c.Detail, "Jetson ") {
			ev.Result.Checks[i].Detail = ev.Host.DeviceClass
		}
	}
	data, err = ev.Marshal()
	require.NoError(t, err)
	ev, err = Parse(data)
	require.NoError(t, err)
	return ev
}

// setCheck sets a check's status and the result's pass to match.
func setCheck(ev *Evidence, name string, s Status, detail string) {
	for i := range ev.Result.Checks {
		if ev.Result.Checks[i].Name == name {
			ev.Result.Checks[i].Status, ev.Result.Checks[i].Detail = s, detail
		}
	}
	ev.Result.Pass = s == Passed
}

// testMatrix parses the shipped matrix, with jetpack6.2 claiming
// "supported", in dir (its evidence store is dir/evidence).
func testMatrix(t testing.TB, dir string) *matrix.Matrix {
	t.Helper()
	data, err := os.ReadFile("../../matrix.json")
	require.NoError(t, err)
	m, err := matrix.Parse(data)
	require.NoError(t, err)
	m.Dir = dir
	rel, ok := m.Release("jetpack6.2")
	require.True(t, ok)
	rel.Tier = TierSupported
	return m
}

// metadata is a build report with jetpack6.2 built as digest and jetpack7.0
// failed.
func metadata(digest string) *MetadataResolver {
	return &MetadataResolver{File: "build.json", Report: &imagebuild.Report{
		Revision: goldenRevision,
		Releases: []imagebuild.ReleaseReport{
			{Name: "jetpack6.2", Outcome: imagebuild.Succeeded, Digest: digest},
			{Name: "jetpack7.0", Outcome: imagebuild.Failed, Error: "compile failed"},
		},
	}}
}

// pushIndex pushes a one-image OCI index with the annotations to ref and
// returns its digest.
func pushIndex(t testing.TB, ref string, annotations map[string]string) string {
	t.Helper()
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{
		Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}},
	})
	if annotations != nil {
		idx = mutate.Annotations(idx, annotations).(v1.ImageIndex)
	}
	parsed, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(parsed, idx))
	d, err := idx.Digest()
	require.NoError(t, err)
	return d.String()
}

// listFiles lists the files under dir, relative to it.
func listFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out = append(out, rel)
		return err
	}))
	return out
}

// renamed returns m's report with its first release renamed to name.
func renamed(m *MetadataResolver, name string) *imagebuild.Report {
	r := *m.Report
	r.Releases = append([]imagebuild.ReleaseReport{}, r.Releases...)
	r.Releases[0].Name = name
	return &r
}

// Passing details of the checks --kernel and --serve add, as the probe writes them.
const (
	kernelPassed = "a PTX kernel JIT-compiled by the driver ran on SM 8.7: 4096 of 4096 values exact (JIT 0.812 ms, kernel 0.051 ms)"
	servePassed  = "20 requests to the embed route gave finite vectors of 384 values (load 812.250 ms, p50 3.120 ms, p95 4.800 ms)"
)

// serving adds what the probe's --kernel and --serve add to evidence: a
// passing cuda-kernel check before the smoke run and a passing serve check
// after it, with their runs.
func serving(ev *Evidence) {
	var checks []Check
	for _, c := range ev.Result.Checks {
		if c.Name == "smoke" {
			checks = append(checks, Check{Name: "cuda-kernel", Status: Passed, Detail: kernelPassed})
		}
		checks = append(checks, c)
	}
	ev.Result.Checks = append(checks, Check{Name: "serve", Status: Passed, Detail: servePassed})
	ev.Result.Kernel = kernelRun()
	ev.Result.Serve = serveRun()
}

// serveRun is a passing serve check's run, as the probe writes it.
func serveRun() *Serve {
	return &Serve{Dimensions: 384, DType: "float16", Requests: 20, LoadMillis: 812.25, P50Millis: 3.12, P95Millis: 4.8}
}

// servingFile is the golden evidence with what --kernel and --serve add
// (serving), level serve; the CLI's tests read it too.
const servingFile = "testdata/orin-nano-jp6-serve.json"

// supported parses servingFile, changed by edit: what a release of the
// tier "supported" needs.
func supported(t testing.TB, edit func(ev *Evidence)) *Evidence {
	t.Helper()
	data, err := os.ReadFile(servingFile)
	require.NoError(t, err)
	return parsed(t, data, edit)
}
