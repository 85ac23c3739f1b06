package evidence

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// TestAdmitRecordsAudit: admitted evidence carries the build-time audit per
// SM from the build metadata, in place of any the file brought, and the
// store writes it and reads it back.
func TestAdmitRecordsAudit(t *testing.T) {
	dir := t.TempDir()
	m := testMatrix(t, dir)
	r := metadata(goldenDigest)
	r.Report.Releases[0].Audit = []buildaudit.Audit{{SM: "8.7", Verdict: "runs"}}
	forged := supported(t, func(ev *Evidence) {
		ev.Audit = []Audit{{SM: "8.7", Verdict: "JIT", From: evidencespec.AuditFromAnnotation}}
	})
	a, err := Admit(t.Context(), forged, m, r, goldenTime().Add(time.Hour), DefaultMaxAge)
	require.NoError(t, err)
	want := []Audit{{SM: "8.7", Verdict: "runs", From: evidencespec.AuditFromMetadata}}
	require.Equal(t, want, a.Evidence.Audit, "what jetbake knows, not what the file says")

	path, err := StoreFor(m).Add(a)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"audit": [
    {
      "sm": "8.7",
      "verdict": "runs",
      "from": "build-metadata"
    }
  ]`)
	entries, err := StoreFor(m).Release("jetpack6.2")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, want, entries[0].Evidence.Audit)

	// A build without the audit records none, and a record stored before
	// the audit existed (the probe's bytes) still reads.
	a, err = Admit(t.Context(), supported(t, nil), m, metadata(goldenDigest), goldenTime().Add(time.Hour), DefaultMaxAge)
	require.NoError(t, err)
	require.Nil(t, a.Evidence.Audit)
	old := filepath.Join(dir, "evidence", "jetpack6.2", "c2efadaaded6-jetson-orin-nano-super-2026-11-19.json")
	require.NoError(t, os.WriteFile(old, []byte(strings.Replace(string(goldenBytes(t)), "2026-11-20T09:30", "2026-11-19T09:30", 1)), 0o644))
	entries, err = StoreFor(m).Release("jetpack6.2")
	require.NoError(t, err)
	require.Len(t, entries, 2)
	require.Nil(t, entries[1].Evidence.Audit)
}

// TestRegistryResolverAudit: through the registry, the audit comes from
// the io.jetbake.audit annotation; one that is not what jetbake writes is
// no audit.
func TestRegistryResolverAudit(t *testing.T) {
	host := testregistry.New(t)
	repo := host + "/jetbake/tei"
	m := testMatrix(t, t.TempDir())
	ann := annotationsOf("jetpack6.2")
	ann[matrix.KeyAudit] = "8.7=no code"
	audited := pushIndex(t, repo+":1.9.3-jetpack6.2", ann)
	ann[matrix.KeyAudit] = "8.7=fine"
	garbled := pushIndex(t, repo+":garbled", ann)
	r, err := NewRegistryResolver(m, repo)
	require.NoError(t, err)

	want := []Audit{{SM: "8.7", Verdict: "no code", From: evidencespec.AuditFromAnnotation}}
	b, err := r.Current(t.Context(), "jetpack6.2")
	require.NoError(t, err)
	require.Equal(t, want, b.Audit)
	b, err = r.Lookup(t.Context(), audited)
	require.NoError(t, err)
	require.Equal(t, want, b.Audit)
	b, err = r.Lookup(t.Context(), garbled)
	require.NoError(t, err)
	require.Nil(t, b.Audit)

	a, err := Admit(t.Context(), supported(t, func(ev *Evidence) { ev.Image.Digest = audited }), m, r, goldenTime(), DefaultMaxAge)
	require.NoError(t, err)
	require.Equal(t, want, a.Evidence.Audit)
}

// TestParseAuditRejects: the record's audit has the form jetbake writes.
func TestParseAuditRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		audit Audit
		want  string
	}{
		"sm":      {Audit{SM: "sm_87", Verdict: "runs", From: "annotation"}, `audit[0].sm: "sm_87": is not an SM target`},
		"verdict": {Audit{SM: "8.7", Verdict: "works", From: "annotation"}, `audit[0].verdict: "works": is not one of the audit's verdicts`},
		"from":    {Audit{SM: "8.7", Verdict: "runs", From: "/home/alice/build.json"}, `audit[0].from: "/home/alice/build.json": is not build-metadata or annotation`},
	} {
		t.Run(name, func(t *testing.T) {
			ev := golden(t, nil)
			ev.Audit = []Audit{tc.audit}
			data, err := ev.Marshal()
			require.NoError(t, err)
			_, err = Parse(data)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
