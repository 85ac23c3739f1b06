package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/moby/buildkit/client"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// splitRawJSON splits the output of `buildx bake --progress rawjson` into
// the status updates (one JSON object a line, as BuildKit's rawjson display
// encodes them) and the lines of text around them (buildx's own messages,
// "ERROR: ..." among them).
func splitRawJSON(out []byte) (updates []*client.SolveStatus, text []string) {
	for line := range bytes.Lines(out) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '{' {
			var st client.SolveStatus
			if err := json.Unmarshal(line, &st); err == nil {
				updates = append(updates, &st)
				continue
			}
		}
		text = append(text, string(line))
	}
	return updates, text
}

// bakeFailure says why bake failed, first line first: buildx's ERROR line,
// else the first failed vertex's error, else its last line of text; then
// how it exited and its text output.
func bakeFailure(err error, text []string, updates []*client.SolveStatus) error {
	var te *toolError
	exit := err
	if errors.As(err, &te) {
		exit = te.err
	}
	reason := ""
	for _, line := range text {
		if strings.HasPrefix(line, "ERROR:") {
			reason = line
			break
		}
	}
	for _, st := range updates {
		for _, v := range st.Vertexes {
			if reason == "" && v.Error != "" {
				reason = v.Name + ": " + v.Error
			}
		}
	}
	if reason == "" && len(text) > 0 {
		reason = text[len(text)-1]
	}
	if reason == "" {
		reason = "no error message"
	}
	return fmt.Errorf("%s (buildx bake: %w)\n%s", reason, exit, lastLines(strings.Join(text, "\n"), 30))
}

// bakePhases reads the phases of a bake build from its status updates with
// jetbake's rules (progress.ClassifyVertex), once buildx's target prefix
// is taken off the vertex names, and with bakeRules first. targets are the
// bake file's targets. The steps of the runtime Dockerfile's stage (the
// router binaries, the entrypoint and image.json copied onto the runtime
// stage) are bake's assembly, as jetbake's own LLB for the same copies is
// jetbake's; buildx also reports the steps of the targets a runtime target
// links to (the router and runtime stages, "[t router 3/7] RUN ...") under
// the runtime target's name, and those keep their stage's phase.
func bakePhases(start, end time.Time, updates []*client.SolveStatus, targets map[string]bool) *progress.Timings {
	return progress.StatusTimings(start, end, updates, func(name string) progress.Phase {
		_, rest := cutTargetPrefix(name, targets)
		if strings.HasPrefix(rest, "["+assemblyStage+" ") && !strings.Contains(rest, "] FROM ") {
			return progress.PhaseAssembly
		}
		for _, r := range bakeRules {
			if strings.HasPrefix(rest, r.prefix) && strings.Contains(rest, r.contains) {
				return r.phase
			}
		}
		return progress.ClassifyVertex(rest)
	})
}

// bakeRules name the phases of the vertices that buildx has and jetbake
// has not (jetbake's rules would call them assembly).
var bakeRules = []struct {
	prefix, contains string
	phase            progress.Phase
}{
	// Reading the bake file: the frontend's work of a bake build.
	{"[internal] load local bake definitions", "", progress.PhaseFrontend},
	// A named context's local folder sent to the daemon ("[context jetbake]
	// load from client", "... load .dockerignore"), as the build context's
	// "[internal] load build context".
	{"[context ", "] load ", progress.PhaseFrontend},
	// --metadata-file: buildx reads each target's provenance after its
	// export, to write the file.
	{"resolving provenance for metadata file", "", progress.PhaseExport},
}

// cutTargetPrefix takes buildx's target prefix off a vertex name: buildx
// names a vertex of target t "[t 2/5] RUN x" or "[t] exporting to image"
// when it builds several targets (its progress.WithPrefix), which gives t
// and "[2/5] RUN x" or "exporting to image". A name that does not start
// with one of targets is returned as it is, with no target.
func cutTargetPrefix(name string, targets map[string]bool) (target, rest string) {
	i := strings.IndexAny(name, " ]")
	if !strings.HasPrefix(name, "[") || i < 0 {
		return "", name
	}
	if _, ok := targets[name[1:i]]; !ok {
		return "", name
	}
	if name[i] == ']' {
		return name[1:i], strings.TrimSpace(name[i+1:])
	}
	return name[1:i], "[" + name[i+1:]
}
