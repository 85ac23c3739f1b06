package matrix_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
)

func TestParseAudit(t *testing.T) {
	got, ok := matrix.ParseAudit("8.7=runs,11.0=no code")
	require.True(t, ok)
	require.Equal(t, []matrix.AuditEntry{{SM: "8.7", Verdict: "runs"}, {SM: "11.0", Verdict: "no code"}}, got)
	for _, bad := range []string{"", "8.7", "8.7=fine", "sm_87=runs", "8.7=runs,8.7=JIT", "8.7=runs,"} {
		_, ok := matrix.ParseAudit(bad)
		require.False(t, ok, bad)
	}
}
