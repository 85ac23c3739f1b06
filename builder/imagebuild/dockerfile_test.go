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

// Both Dockerfiles keep the contract jetbake builds them by: a router stage
// that takes CUDA_COMPUTE_CAP and starts (directly or through its parent
// stage) from the BUILD_BASE build arg.
func TestDockerfilesKeepTheRouterContract(t *testing.T) {
	for _, path := range []string{"../../dockerfiles/Dockerfile-jetson", "../../testdata/standin-router/Dockerfile"} {
		t.Run(path, func(t *testing.T) {
			stages, router, metaArgs := routerStage(t, path)
			require.True(t, declaresArg(router, "CUDA_COMPUTE_CAP"), "the router stage declares ARG CUDA_COMPUTE_CAP")
			require.True(t, slices.ContainsFunc(metaArgs, func(a instructions.ArgCommand) bool {
				return slices.ContainsFunc(a.Args, func(kv instructions.KeyValuePairOptional) bool { return kv.Key == "BUILD_BASE" })
			}), "BUILD_BASE is a global ARG")
			base := router.BaseName
			for base != "${BUILD_BASE}" {
				i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == base })
				require.GreaterOrEqual(t, i, 0, "stage %q starts from BUILD_BASE or from a stage that does", router.Name)
				base = stages[i].BaseName
			}
		})
	}
}

// The real router's compile caches are keyed by architecture and SM, so that
// no target reuses objects built for another GPU.
func TestDockerfileJetsonCachesPerSM(t *testing.T) {
	data, err := os.ReadFile("../../dockerfiles/Dockerfile-jetson")
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
			perSM++
		}
	}
	require.GreaterOrEqual(t, perSM, 2, "the compiler cache and the target folder are per SM")
}

// Both Dockerfiles' router stages take jetson-compute-cap.sh from the named
// context jetbake passes and run it on the source with the target's SM
// before compiling: without it TEI's router refuses to start on the Jetson
// it was built for. Removing the step from Dockerfile-jetson fails here.
func TestDockerfilesRunTheComputeCapScript(t *testing.T) {
	for path, compile := range map[string]string{
		"../../dockerfiles/Dockerfile-jetson":      "cargo build",
		"../../testdata/standin-router/Dockerfile": "compile-table.sh",
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
