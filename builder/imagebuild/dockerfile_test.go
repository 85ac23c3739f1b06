package imagebuild

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/dockerfiles"
)

// routerStage parses a Dockerfile and returns its stages and the router stage.
func routerStage(t *testing.T, path string) ([]instructions.Stage, instructions.Stage, []instructions.ArgCommand) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	ast, err := parser.Parse(f)
	require.NoError(t, err)
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	require.NoError(t, err)
	i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == "router" })
	require.GreaterOrEqual(t, i, 0, "%s has a stage named router", path)
	return stages, stages[i], metaArgs
}

func declaresArg(s instructions.Stage, name string) bool {
	for _, c := range s.Commands {
		if a, ok := c.(*instructions.ArgCommand); ok {
			for _, kv := range a.Args {
				if kv.Key == name {
					return true
				}
			}
		}
	}
	return false
}

const dockerfileJetson = "../../dockerfiles/Dockerfile-jetson"

// Dockerfile-jetson keeps the contract jetbake builds it by: a router stage
// that takes CUDA_COMPUTE_CAP and starts (directly or through its parent
// stage) from the BUILD_BASE build arg, and a runtime-base stage from
// RUNTIME_BASE.
func TestDockerfileKeepsTheRouterContract(t *testing.T) {
	stages, router, metaArgs := routerStage(t, dockerfileJetson)
	require.True(t, declaresArg(router, "CUDA_COMPUTE_CAP"), "the router stage declares ARG CUDA_COMPUTE_CAP")
	for _, arg := range []string{"BUILD_BASE", "RUNTIME_BASE", "CUDA_LINKING"} {
		require.True(t, slices.ContainsFunc(metaArgs, func(a instructions.ArgCommand) bool {
			return slices.ContainsFunc(a.Args, func(kv instructions.KeyValuePairOptional) bool { return kv.Key == arg })
		}), "%s is a global ARG", arg)
	}
	from := func(stage, arg string) {
		base := stage
		for base != "${"+arg+"}" {
			i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == base })
			require.GreaterOrEqual(t, i, 0, "stage %q starts from %s or from a stage that does", stage, arg)
			base = stages[i].BaseName
		}
	}
	from(router.Name, "BUILD_BASE")
	from("runtime-base", "RUNTIME_BASE")
}

// The router stage copies what TEI's own Dockerfiles copy (backends, core,
// router, Cargo.toml and Cargo.lock; rust-toolchain.toml in the toolchain
// stage), never the whole tree: TEI's .cargo/config.toml sets
// target-cpu=native. Its cargo line is TEI's Dockerfile-cuda's, with the
// linking feature from CUDA_LINKING.
func TestDockerfileCopiesWhatTEICopies(t *testing.T) {
	stages, router, _ := routerStage(t, dockerfileJetson)
	var copied []string
	for _, st := range stages {
		for _, c := range st.Commands {
			cp, ok := c.(*instructions.CopyCommand)
			if !ok || cp.From != "" {
				continue
			}
			copied = append(copied, cp.SourcePaths...)
		}
	}
	require.ElementsMatch(t, []string{"rust-toolchain.toml", "Cargo.toml", "Cargo.lock", "backends", "core", "router"}, copied)
	var cargo string
	for _, c := range router.Commands {
		if r, ok := c.(*instructions.RunCommand); ok && strings.Contains(strings.Join(r.CmdLine, " "), "cargo build") {
			cargo = strings.Join(strings.Fields(strings.Join(r.CmdLine, " ")), " ")
		}
	}
	require.Contains(t, cargo, `cargo build --release --bin text-embeddings-router -F "${CARGO_FEATURES}" -F "${CUDA_LINKING}" -F http --no-default-features`)
	require.NotContains(t, cargo, "target-cpu")
}

// The real router's compile caches are keyed by architecture, SM and CUDA
// release, so that no target reuses objects built for another GPU or
// linked against another CUDA, and the target folder is locked: releases
// of one SM built at once must not take each other's binary.
func TestDockerfileJetsonCachesPerSM(t *testing.T) {
	data, err := os.ReadFile(dockerfileJetson)
	require.NoError(t, err)
	var ids []string
	for _, field := range strings.Fields(string(data)) {
		opts, ok := strings.CutPrefix(field, "--mount=type=cache,")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(opts, ",") {
			if id, ok := strings.CutPrefix(kv, "id="); ok {
				ids = append(ids, id)
			}
		}
	}
	require.NotEmpty(t, ids)
	perSM := 0
	for _, id := range ids {
		require.Contains(t, id, "${TARGETARCH}", "cache %s is keyed by architecture", id)
		if strings.Contains(id, "${CUDA_COMPUTE_CAP}") {
			require.Contains(t, id, "${CUDA_RELEASE}", "cache %s is keyed by CUDA release", id)
			perSM++
		}
	}
	require.GreaterOrEqual(t, perSM, 2, "the compiler cache and the target folder are per SM")
	require.Contains(t, string(data), "target=/src/target,sharing=locked")
}

// Both Dockerfiles' router stages take jetson-compute-cap.sh from the named
// context jetbake passes and run it on the source with the target's SM
// before compiling: without it TEI's router refuses to start on the Jetson
// it was built for. Removing the step from Dockerfile-jetson fails here.
func TestDockerfilesRunTheComputeCapScript(t *testing.T) {
	for path, compile := range map[string]string{
		dockerfileJetson: "cargo build",
	} {
		t.Run(path, func(t *testing.T) {
			_, router, _ := routerStage(t, path)
			copied, patched, compiled := -1, -1, -1
			for i, c := range router.Commands {
				switch c := c.(type) {
				case *instructions.CopyCommand:
					if c.From == dockerfiles.ContextName && slices.Contains(c.SourcePaths, dockerfiles.ComputeCapScript) {
						copied = i
					}
				case *instructions.RunCommand:
					line := strings.Join(c.CmdLine, " ")
					if strings.Contains(line, dockerfiles.ComputeCapScript+" /src \"${CUDA_COMPUTE_CAP}\"") && patched < 0 {
						patched = i
					}
					if strings.Contains(line, compile) {
						compiled = i
					}
				}
			}
			require.GreaterOrEqual(t, copied, 0, "the router stage copies %s from the %q context", dockerfiles.ComputeCapScript, dockerfiles.ContextName)
			require.Greater(t, patched, copied, "then runs it on /src with the SM")
			require.Greater(t, compiled, patched, "before it compiles")
		})
	}
}
