package dockercheck

import (
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/subrequests/lint"
	"github.com/stretchr/testify/require"
)

// A stage's options ask for the checks, with the rule that cannot judge
// an arm64 base on an amd64 daemon skipped.
func TestLintRequest(t *testing.T) {
	opts := map[string]string{"target": "router"}
	LintRequest(opts)
	require.Equal(t, map[string]string{"target": "router", "requestid": lint.RequestLint,
		"build-arg:BUILDKIT_DOCKERFILE_CHECK": "skip=InvalidBaseImagePlatform"}, opts)
}

// The frontend's result.json becomes findings; one it cannot read is an
// error that says so.
func TestFromLintResult(t *testing.T) {
	found, err := FromLintResult([]byte(`{"warnings":[{"ruleName":"FromAsCasing","detail":"casing","location":{"sourceIndex":-1}}]}`),
		"jetpack6.2", "8.7", "/repo/dockerfiles", "Dockerfile-jetson")
	require.NoError(t, err)
	require.Equal(t, []Finding{{Release: "jetpack6.2", SM: "8.7", Severity: SeverityWarning, Rule: "FromAsCasing", Message: "casing",
		File: "/repo/dockerfiles/Dockerfile-jetson"}}, found)
	_, err = FromLintResult([]byte(`not json`), "jetpack6.2", "8.7", "/repo/dockerfiles", "Dockerfile-jetson")
	require.ErrorContains(t, err, "the Dockerfile frontend's check result: ")
}

// The converter's warnings become findings of the release and SM target,
// with the line of their first range.
func TestFromConverter(t *testing.T) {
	var found []Finding
	warn := FromConverter("jetpack6.2", "8.7", "/repo/Dockerfile", func(f Finding) { found = append(found, f) })
	warn("FromAsCasing", "description", "https://docs.docker.com/go/dockerfile/rule/from-as-casing/", "casing", []parser.Range{{Start: parser.Position{Line: 9}}})
	warn("NoLine", "description", "", "somewhere", nil)
	require.Equal(t, []Finding{
		{Release: "jetpack6.2", SM: "8.7", Severity: SeverityWarning, Rule: "FromAsCasing", Message: "casing", File: "/repo/Dockerfile", Line: 9,
			URL: "https://docs.docker.com/go/dockerfile/rule/from-as-casing/"},
		{Release: "jetpack6.2", SM: "8.7", Severity: SeverityWarning, Rule: "NoLine", Message: "somewhere", File: "/repo/Dockerfile"},
	}, found)
}
