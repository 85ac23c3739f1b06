package dockercheck

import (
	"encoding/json"
	"fmt"

	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/subrequests/lint"
)

// LintRequest makes opts, the frontend options of a stage, ask the
// Dockerfile frontend for its checks (the "frontend.lint" subrequest).
// The checks judge the Dockerfile for the daemon's platform (they ignore
// the "platform" option), so InvalidBaseImagePlatform would flag every
// arm64 base on an amd64 daemon; jetbake always builds linux/arm64 and
// resolves the bases for it, so that rule is skipped.
func LintRequest(opts map[string]string) {
	opts["requestid"] = lint.RequestLint
	opts["build-arg:BUILDKIT_DOCKERFILE_CHECK"] = "skip=InvalidBaseImagePlatform"
}

// FromLintResult is FromLint of the checks' result as the frontend
// returns it (its result.json).
func FromLintResult(result []byte, release, sm, dir, dockerfile string) ([]Finding, error) {
	var r lint.LintResults
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("the Dockerfile frontend's check result: %w", err)
	}
	return FromLint(release, sm, dir, dockerfile, &r), nil
}

// FromConverter is the function BuildKit's Dockerfile converter gives the
// warnings of its checks to, for the release's Dockerfile (file) checked
// for SM target sm ("" for none): each becomes a finding given to add.
func FromConverter(release, sm, file string, add func(Finding)) linter.LintWarnFunc {
	return func(rule, _, url, msg string, location []parser.Range) {
		f := Finding{Release: release, SM: sm, Severity: SeverityWarning, Rule: rule, Message: msg, File: file, URL: url}
		if len(location) > 0 {
			f.Line = location[0].Start.Line
		}
		add(f)
	}
}
