package matrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// loadWith writes the shipped matrix with router changed by edit beside a
// Dockerfile and loads it.
func loadWith(t *testing.T, dockerfile string, edit func(router map[string]any)) error {
	t.Helper()
	doc := shippedTree(t)
	router := section(doc, "router")
	router["context"], router["dockerfile"] = ".", "Dockerfile"
	edit(router)
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "matrix.json"), data, 0o644))
	_, err = Load(filepath.Join(dir, "matrix.json"))
	return err
}

func TestRuntimeTargetStage(t *testing.T) {
	const df = "ARG BUILD_BASE\nARG RUNTIME_BASE\nFROM ${BUILD_BASE} AS router\nFROM ${RUNTIME_BASE} AS deps\nFROM deps AS runtime-base\nFROM ${BUILD_BASE} AS wrong\n"
	tests := []struct {
		name, runtime, path, message string
	}{
		{name: "through another stage", runtime: "runtime-base"},
		{name: "none", runtime: ""},
		{name: "missing", runtime: "nope", path: "router.runtime_target", message: "is not a stage of "},
		{name: "the router stage", runtime: "router", path: "router.runtime_target", message: "is the stage that compiles the router"},
		{name: "not on the runtime base", runtime: "wrong", path: "router.runtime_target", message: "does not start from ${RUNTIME_BASE}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadWith(t, df, func(r map[string]any) {
				r["runtime_target"] = tt.runtime
				if tt.runtime == "" {
					delete(r, "runtime_target")
				}
			})
			if tt.path == "" {
				require.NoError(t, err)
				return
			}
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			require.Len(t, verr.Errors, 1, "%v", verr)
			require.NotNil(t, find(verr.Errors, tt.path, tt.message), "%v", verr)
		})
	}
	err := loadWith(t, df, func(r map[string]any) { r["target"] = "compile" })
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	found := find(verr.Errors, "router.target", "is not a stage of")
	require.NotNil(t, found)
	require.Equal(t, "name one of its stages (router, deps, runtime-base, wrong), or add the stage FROM IMAGE AS compile", found.Fix)
	require.NoError(t, loadWith(t, "FROM scratch AS router\nFROMX runtime\n", func(map[string]any) {}),
		"a Dockerfile the parser refuses is left to check and build, which name the line")
}

// TestRouterTargetStage: router.target is checked against the Dockerfile's
// stages with or without runtime_target (issue 51: validate said ok for a
// Dockerfile whose only stage was "routr"), with the stage probably meant
// and its line.
func TestRouterTargetStage(t *testing.T) {
	tests := []struct {
		name, dockerfile, runtime, fix string
	}{
		{name: "a typo, no runtime target", dockerfile: "FROM ubuntu AS routr\nRUN true\n",
			fix: `DIR/Dockerfile:1 names the stage "routr": did you mean "router"? rename it (FROM ubuntu AS router) or set router.target to "routr"`},
		{name: "a typo on a later line", dockerfile: "ARG BUILD_BASE\nFROM scratch AS deps\n\nFROM ${BUILD_BASE} AS Routers\n",
			fix: `DIR/Dockerfile:4 names the stage "routers": did you mean "router"? rename it (FROM ${BUILD_BASE} AS router) or set router.target to "routers"`},
		{name: "no named stage", dockerfile: "FROM ubuntu\nRUN true\n",
			fix: `name a stage of it (FROM IMAGE AS router): it has no named stage`},
		{name: "other stages", dockerfile: "FROM ubuntu AS build\nFROM build AS final\n",
			fix: `name one of its stages (build, final), or add the stage FROM IMAGE AS router`},
		{name: "the stage exists", dockerfile: "FROM ubuntu AS router\n"},
		{name: "with a runtime target", dockerfile: "ARG RUNTIME_BASE\nFROM ubuntu AS routr\nFROM ${RUNTIME_BASE} AS runtime\n", runtime: "runtime",
			fix: `DIR/Dockerfile:2 names the stage "routr": did you mean "router"? rename it (FROM ubuntu AS router) or set router.target to "routr"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dir string
			err := loadWith(t, tt.dockerfile, func(r map[string]any) {
				r["target"] = "router"
				delete(r, "runtime_target")
				if tt.runtime != "" {
					r["runtime_target"] = tt.runtime
				}
			})
			if tt.fix == "" {
				require.NoError(t, err)
				return
			}
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			require.Len(t, verr.Errors, 1, "%v", verr)
			found := verr.Errors[0]
			require.Equal(t, "router.target", found.Path)
			require.Equal(t, `"router"`, found.Value)
			require.Contains(t, found.Message, "is not a stage of ")
			dir = filepath.Dir(strings.TrimPrefix(found.Message, "is not a stage of "))
			require.Equal(t, strings.ReplaceAll(tt.fix, "DIR", dir), found.Fix)
			require.NotZero(t, found.Line, "the error points at router.target in the matrix")
		})
	}
}

func TestNearestName(t *testing.T) {
	tests := []struct {
		key   string
		names []string
		want  string
	}{
		{"router", []string{"routr"}, "routr"},
		{"router", []string{"build", "routers", "rooter"}, "routers"},
		{"router", []string{"runtime", "build"}, ""},
		{"app", []string{"ap", "base"}, "ap"},
		{"app", []string{}, ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, nearestName(tt.key, tt.names), "%s in %v", tt.key, tt.names)
	}
}

func TestLinkingBuildArg(t *testing.T) {
	doc := shippedTree(t)
	section(doc, "router")["build_args"].(map[string]any)["CUDA_LINKING"] = ""
	release(doc, 1)["build_args"] = map[string]any{"CUDA_LINKING": "static"}
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	_, err = Parse(data)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	for _, path := range []string{"router.build_args.CUDA_LINKING", "releases[1].build_args.CUDA_LINKING"} {
		found := find(verr.Errors, path, "is not a linking mode of TEI's router")
		require.NotNil(t, found, "%v", verr)
		require.Contains(t, found.Message, "TEI issue 709")
		require.Contains(t, found.Fix, `"static-linking"`)
	}
}

func TestGitCommit(t *testing.T) {
	const sha = "06670157fb6c1523482219bdb2d1660277d38088"
	tests := map[string]string{
		"https://github.com/huggingface/text-embeddings-inference.git?ref=v1.9.3&checksum=" + sha: sha,
		"https://github.com/huggingface/text-embeddings-inference.git#" + sha:                     sha,
		"https://github.com/huggingface/text-embeddings-inference.git#06670157":                   "",
		"https://github.com/huggingface/text-embeddings-inference.git#v1.9.3":                     "",
		"./tei": "",
	}
	for ctx, want := range tests {
		require.Equal(t, want, GitCommit(ctx), ctx)
	}
}
