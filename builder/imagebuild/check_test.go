package imagebuild

import (
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/solver/pb"
	"github.com/stretchr/testify/require"
)

// The converter's check warnings and the frontend's progress warnings
// become the release's findings, once each, with file and line.
func TestBuildFindings(t *testing.T) {
	p := testPlan()
	j := &releaseJob{opts: &options{}, plan: p, release: p.Releases[1], dockerfile: "Dockerfile-jetson", dockerfileDir: "/repo/dockerfiles"}
	at := func(line int) []parser.Range { return []parser.Range{{Start: parser.Position{Line: line}}} }
	for _, tg := range j.release.Targets {
		warn := j.lintWarn(tg)
		warn("FromAsCasing", "description", "https://docs.docker.com/go/dockerfile/rule/from-as-casing/", "'as' and 'FROM' keywords' casing do not match", at(9))
		warn("FromAsCasing", "description", "https://docs.docker.com/go/dockerfile/rule/from-as-casing/", "'as' and 'FROM' keywords' casing do not match", at(9))
	}
	frontendWarnings([]*releaseJob{j})(j.release.Name, &client.VertexWarning{Short: []byte("JSONArgsRecommended: use JSON (line 12)"),
		Range: []*pb.Range{{Start: &pb.Position{Line: 12}}}})
	frontendWarnings([]*releaseJob{j})("another", &client.VertexWarning{Short: []byte("not this release's")})

	rr := j.initialReport()
	require.Len(t, rr.Findings, 3, "one per SM target and one from the frontend: %+v", rr.Findings)
	require.Equal(t, "/repo/dockerfiles/Dockerfile-jetson:9: warning: FromAsCasing: 'as' and 'FROM' keywords' casing do not match (release jetpack7.2, SM 8.7)", rr.Findings[0].String())
	require.Equal(t, "11.0", rr.Findings[1].SM)
	require.Equal(t, "/repo/dockerfiles/Dockerfile-jetson:12: warning: JSONArgsRecommended: use JSON (line 12) (release jetpack7.2)", rr.Findings[2].String())

	j.resetFindings()
	require.Empty(t, j.initialReport().Findings, "a new attempt starts without the last one's findings")
}
