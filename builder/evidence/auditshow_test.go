package evidence

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
)

// TestAuditShown: the issue text (`evidence report`, which the gate writes
// into its summary) and `jetbake support` show each SM's audit verdict,
// partial included, and the issue text says why a probe's own file has
// none.
func TestAuditShown(t *testing.T) {
	md, err := IssueMarkdown(supported(t, nil))
	require.NoError(t, err)
	require.Contains(t, md, "| Build audit | not recorded (the probe's own file: 'jetbake evidence add' records the build's audit in the evidence it stores) |\n")

	m := testMatrix(t, t.TempDir())
	r := metadata(goldenDigest)
	r.Report.Releases[0].Audit = []buildaudit.Audit{{SM: "8.7", Verdict: "partial"}}
	a, err := Admit(t.Context(), supported(t, nil), m, r, goldenTime().Add(time.Hour), DefaultMaxAge)
	require.NoError(t, err)
	md, err = IssueMarkdown(a.Evidence)
	require.NoError(t, err)
	require.Contains(t, md, "| Build audit | SM 8.7 partial (from build-metadata) |\n")
	_, err = StoreFor(m).Add(a)
	require.NoError(t, err)

	table, err := Support(t.Context(), m, WithResolver(r), WithNow(goldenTime().Add(time.Hour)))
	require.NoError(t, err)
	var text, mdt, js bytes.Buffer
	require.NoError(t, table.WriteText(&text))
	require.Contains(t, text.String(), "    Jetson Orin Nano Super, 2026-11-20, sha256:c2efadaaded6, rev 677e5d8f2a41, level serve, audit SM 8.7 partial (from build-metadata) (counts)\n")
	require.NoError(t, table.WriteMarkdown(&mdt))
	require.Contains(t, mdt.String(), "level serve, audit SM 8.7 partial (from build-metadata) (counts) |")
	require.NoError(t, table.WriteJSON(&js))
	require.Contains(t, js.String(), `"verdict": "partial"`)
}
