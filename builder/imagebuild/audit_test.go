package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
)

// The audit judges every target of the release and is recorded for the report.
func TestRecordAudit(t *testing.T) {
	p := testPlan()
	j := &releaseJob{opts: &options{}, plan: p, release: p.Releases[1]}
	j.routerCode = []buildaudit.Code{{Path: "/usr/local/bin/router-87", Role: buildaudit.RoleRouter}}
	audits, err := j.recordAudit()
	require.NoError(t, err)
	require.Len(t, audits, 2)
	require.Equal(t, []string{"8.7", "11.0"}, []string{audits[0].SM, audits[1].SM})
	require.Equal(t, "none", audits[0].Verdict)
	require.Equal(t, j.audit, audits, "recorded for the report")
}
