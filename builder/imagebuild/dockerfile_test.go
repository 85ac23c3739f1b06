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
	// toolchain is the stage the global ARG TOOLCHAIN picks: toolchain by
	// default, toolchain-cross on the cross path.
	toolchain := "toolchain"
	from := func(stage, arg string) instructions.Stage {
		base := stage
		var st instructions.Stage
		for base != "${"+arg+"}" {
			if base == "${TOOLCHAIN}" {
				base = toolchain
			}
			i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == base })
			require.GreaterOrEqual(t, i, 0, "stage %q starts from %s or from a stage that does", stage, arg)
			st, base = stages[i], stages[i].BaseName
		}
		return st
	}
	require.Empty(t, from(router.Name, "BUILD_BASE").Platform, "the native path builds on the target platform")
	from("runtime-base", "RUNTIME_BASE")
	toolchain = "toolchain-cross"
	require.Equal(t, "$BUILDPLATFORM", from(router.Name, "CROSS_BUILD_BASE").Platform, "the cross path builds on the build platform")
}

// The router stage copies what TEI's own Dockerfiles copy (backends, core,
// router, Cargo.toml and Cargo.lock; rust-toolchain.toml in the toolchain
// stage), never the whole tree: TEI's .cargo/config.toml sets
// target-cpu=native. Its cargo line is TEI's Dockerfile-cuda's, with the
// linking feature from CUDA_LINKING.
func TestDockerfileCopiesWhatTEICopies(t *testing.T) {
	stages, router, _ := routerStage(t, dockerfileJetson)
	var copied, crossCopied []string
	for _, st := range stages {
		for _, c := range st.Commands {
			cp, ok := c.(*instructions.CopyCommand)
			if !ok || cp.From != "" {
				continue
			}
			if st.Name == "toolchain-cross" {
				crossCopied = append(crossCopied, cp.SourcePaths...)
				continue
			}
			copied = append(copied, cp.SourcePaths...)
		}
	}
	require.ElementsMatch(t, []string{"rust-toolchain.toml", "Cargo.toml", "Cargo.lock", "backends", "core", "router"}, copied)
	require.Equal(t, []string{"rust-toolchain.toml"}, crossCopied, "the cross toolchain, as the native one")
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

// sccache's remote caches: the secrets that configure them are mounted on
// the router's cargo step only, each as the variable sccache (or OpenDAL,
// for the AWS and GitHub runtime ones) reads, none required; the remote
// cache is scoped as the local cache mount is (architecture, SM, CUDA
// release); sccache is installed with its S3 and GitHub Actions backends,
// without which it ignores them, at a version that speaks GitHub's cache
// service v2; and the empty variables of secrets not given are unset.
func TestDockerfileJetsonRemoteCompileCache(t *testing.T) {
	stages, _, _ := routerStage(t, dockerfileJetson)
	want := map[string]string{"actions_results_url": "ACTIONS_RESULTS_URL", "actions_runtime_token": "ACTIONS_RUNTIME_TOKEN",
		"sccache_bucket": "SCCACHE_BUCKET", "sccache_region": "SCCACHE_REGION", "sccache_endpoint": "SCCACHE_ENDPOINT",
		"aws_access_key_id": "AWS_ACCESS_KEY_ID", "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY", "aws_session_token": "AWS_SESSION_TOKEN"}
	var withSecrets []string
	var install string
	for _, st := range stages {
		for _, c := range st.Commands {
			run, ok := c.(*instructions.RunCommand)
			if !ok {
				continue
			}
			line := strings.Join(strings.Fields(strings.Join(run.CmdLine, " ")), " ")
			if strings.Contains(line, "cargo install sccache") {
				install = line
			}
			got := map[string]string{}
			var sccacheMount string
			// The mounts' options are read when the frontend expands them.
			require.NoError(t, run.Expand(func(word string) (string, error) { return word, nil }))
			for _, m := range instructions.GetMounts(run) {
				switch m.Type {
				case instructions.MountTypeSecret:
					require.False(t, m.Required, "%s is optional", m.CacheID)
					require.NotNil(t, m.Env, "%s is given as a variable", m.CacheID)
					got[m.CacheID] = *m.Env
				case instructions.MountTypeCache:
					if m.Target == "/sccache" {
						sccacheMount = m.CacheID
					}
				}
			}
			if len(got) == 0 {
				continue
			}
			withSecrets = append(withSecrets, st.Name+": "+line)
			require.Equal(t, want, got)
			scope := `scope="${TARGETARCH}-sm${CUDA_COMPUTE_CAP}-cuda${CUDA_RELEASE}"`
			require.Contains(t, line, scope)
			require.Equal(t, "sccache-${TARGETARCH}-sm${CUDA_COMPUTE_CAP}-cuda${CUDA_RELEASE}", sccacheMount, "the local cache has the remote one's scope")
			for _, s := range []string{`SCCACHE_S3_KEY_PREFIX="sccache/${scope}"`, `SCCACHE_GHA_VERSION="${scope}"`, "ACTIONS_CACHE_SERVICE_V2=on", "sccache --show-stats"} {
				require.Contains(t, line, s)
			}
			for _, v := range want {
				require.Contains(t, line, v, "%s is unset when empty", v)
			}
			require.Contains(t, line, `eval "[ -n \"\${$v}\" ]" || unset "$v"`)
		}
	}
	require.Len(t, withSecrets, 1, "one step mounts them: %v", withSecrets)
	require.True(t, strings.HasPrefix(withSecrets[0], "router: "), withSecrets[0])
	require.Contains(t, withSecrets[0], "cargo build")
	require.Contains(t, install, "--version 0.10.0 --no-default-features --features s3,gha")
}
