package dockercheck

import (
	"testing"

	"github.com/moby/buildkit/frontend/subrequests/lint"
	"github.com/moby/buildkit/solver/pb"
	"github.com/stretchr/testify/require"
)

func TestFindings(t *testing.T) {
	at := func(line int32) *pb.Location {
		return &pb.Location{SourceIndex: 0, Ranges: []*pb.Range{{Start: &pb.Position{Line: line}, End: &pb.Position{Line: line}}}}
	}
	r := &lint.LintResults{
		Sources: []*pb.SourceInfo{{Filename: "Dockerfile-jetson"}},
		Warnings: []lint.Warning{
			{RuleName: "FromAsCasing", Detail: "'as' and 'FROM' keywords' casing do not match", URL: "https://docs.docker.com/go/dockerfile/rule/from-as-casing/", Location: at(9)},
			{RuleName: "NoLocation", Detail: "somewhere", Location: &pb.Location{SourceIndex: -1}},
		},
		Error: &lint.BuildError{Message: "unknown instruction: FROMX", Location: *at(3)},
	}
	got := FromLint("jetpack6.2", "8.7", "/repo/dockerfiles", "Dockerfile-jetson", r)
	require.Len(t, got, 3)
	require.Equal(t, Finding{Release: "jetpack6.2", SM: "8.7", Severity: SeverityWarning, Rule: "FromAsCasing",
		Message: "'as' and 'FROM' keywords' casing do not match", File: "/repo/dockerfiles/Dockerfile-jetson", Line: 9,
		URL: "https://docs.docker.com/go/dockerfile/rule/from-as-casing/"}, got[0])
	require.Equal(t, 0, got[1].Line, "no location: the file without a line")
	require.Equal(t, "/repo/dockerfiles/Dockerfile-jetson:3: error: unknown instruction: FROMX (release jetpack6.2, SM 8.7)", got[2].String())
	require.Equal(t, "/repo/dockerfiles/Dockerfile-jetson: warning: NoLocation: somewhere (release jetpack6.2, SM 8.7)", got[1].String())
	require.True(t, HasErrors(got))
	require.False(t, HasErrors(got[:2]))
}
