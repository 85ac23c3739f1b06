package standin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/cacheserver"
	"github.com/jetbake/jetbake/builder/internal/standin/tei/sccache"
	"github.com/jetbake/jetbake/computecap"
)

// sccacheRoot is a build base after Dockerfile-jetson's toolchain stage,
// with sccache installed by `cargo install sccache INSTALL`, and the
// TEI-shaped source at /src as the router stage copies it.
func sccacheRoot(t *testing.T, k Kit, install string) string {
	t.Helper()
	root := unpacked(t, k, Base{Ref: jetpackBase, L4T: "36.4.0", CUDA: "12.6", Flavour: computecap.FlavourTegra, Devel: true,
		Ubuntu: "22.04", Libs: UbuntuLibs("22.04"), CABundle: true})
	src, err := filepath.Abs("../../../testdata/tei-source")
	require.NoError(t, err)
	require.NoError(t, os.CopyFS(filepath.Join(root, "src"), os.DirFS(src)))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "src", ".cargo")))
	// A container has /dev/null (character device 1:3), which Go's os/exec
	// opens for a child's standard input.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
	require.NoError(t, syscall.Mknod(filepath.Join(root, "dev", "null"), syscall.S_IFCHR|0o666, 1<<8|3))
	out, code := inImage(t, root, "apt-get update >/dev/null && apt-get install -qq ca-certificates curl pkg-config libssl-dev build-essential >/dev/null && "+
		"cd /src && curl -sSf https://sh.rustup.rs | sh -s -- -y --default-toolchain none >/dev/null && rustup toolchain install >/dev/null && "+
		"cargo install sccache --locked "+install, toolchainEnv...)
	require.Equal(t, 0, code, out)
	return root
}

var toolchainEnv = []string{"RUSTUP_HOME=/usr/local/rustup", "CARGO_HOME=/usr/local/cargo"}

// routerBuild is Dockerfile-jetson's cargo line, then sccache's stats, in
// a fresh container: no target folder and no sccache server yet.
const routerBuild = "rm -rf /src/target /tmp/jetbake-standin-sccache && cd /src && " +
	"cargo build --release --bin text-embeddings-router -F candle-cuda -F static-linking -F http --no-default-features && sccache --show-stats"

// buildWith runs routerBuild with RUSTC_WRAPPER=sccache and env, on
// Dockerfile-jetson's PATH (candle's kernel crates ask nvcc, in the CUDA
// tree's bin, which SMs it builds).
func buildWith(t *testing.T, root string, env ...string) (string, int) {
	t.Helper()
	return inImage(t, root, routerBuild, append(append([]string{"RUSTC_WRAPPER=sccache", "SCCACHE_DIR=/sccache", "CUDA_COMPUTE_CAP=87",
		"PATH=/usr/local/cargo/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, toolchainEnv...), env...)...)
}

// compiles reads the stand-in's record of each call from sccache's stats.
func compiles(out string) map[string]string { return sccache.ReadStats(out).Compiles }

// workspaceLibs are the TEI-shaped tree's libraries a CUDA router build compiles.
var workspaceLibs = []string{"text_embeddings_backend_core lib", "text_embeddings_backend_candle lib", "text_embeddings_backend lib", "text_embeddings_core lib"}

func requireAll(t *testing.T, got map[string]string, result string, out string) {
	t.Helper()
	for _, lib := range workspaceLibs {
		require.Equal(t, result, got[lib], "%s\n%s", lib, out)
	}
	require.Equal(t, "not cacheable (crate-type)", got["text_embeddings_router bin"], out)
	require.Equal(t, "not cacheable (crate-type)", got["build_script_build bin"], "build scripts are binaries: %s", out)
}

// sccache on the local disk: a second build in a fresh container with the
// same cache folder hits every library; a one-line change in the router's
// main.rs changes no library's key, and the binary is never cached.
func TestStandinSccacheDisk(t *testing.T) {
	k := realKit(t)
	root := sccacheRoot(t, k, "--version 0.10.0 --no-default-features")
	out, code := buildWith(t, root)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `Cache location                  Local disk: "/sccache"`)
	requireAll(t, compiles(out), "miss", out)
	require.Regexp(t, `Cache misses +4\n`, out)
	require.Regexp(t, `Non-cacheable calls +4\n`, out, "the probe, two build scripts and the binary")

	require.NoError(t, os.WriteFile(filepath.Join(root, "src", "router", "src", "main.rs"), []byte("// one line\nfn main() {}\n"), 0o644))
	out, code = buildWith(t, root)
	require.Equal(t, 0, code, out)
	requireAll(t, compiles(out), "hit", out)
	require.Regexp(t, `Cache hits +4\n`, out)

	// An SM this CUDA's nvcc does not build (Thor needs CUDA 13): candle's
	// kernel crates stop before anything compiles, in bindgen_cuda's words.
	out, code = buildWith(t, root, "CUDA_COMPUTE_CAP=110")
	require.Equal(t, 101, code, out)
	require.Contains(t, out, "nvcc cannot target gpu arch 110. Available nvcc targets are [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90].")

	// Another SM: the candle backend reads CUDA_COMPUTE_CAP with env!, so
	// its key changes; the other libraries' do not.
	out, code = buildWith(t, root, "CUDA_COMPUTE_CAP=80")
	require.Equal(t, 0, code, out)
	got := compiles(out)
	require.Equal(t, "miss", got["text_embeddings_backend_candle lib"], out)
	require.Equal(t, "hit", got["text_embeddings_backend_core lib"], out)
}

// sccache on S3, as a runner reaches it: the first runner writes every
// library under the key prefix, a second one with an empty disk reads
// them back, every request signed with the runner's key. The contract's
// failures: an unreachable endpoint, a wrong secret and a missing region
// fail the build when sccache's server starts, as sccache's do; an sccache
// built without its S3 feature ignores the bucket and uses the disk.
func TestStandinSccacheS3(t *testing.T) {
	k := realKit(t)
	root := sccacheRoot(t, k, "--version 0.10.0 --no-default-features --features s3,gha")
	s3, err := cacheserver.NewS3("us-east-1", "AKIASTANDIN", "standin-secret", "sccache")
	require.NoError(t, err)
	t.Cleanup(s3.Close)
	env := []string{"SCCACHE_BUCKET=sccache", "SCCACHE_REGION=us-east-1", "SCCACHE_ENDPOINT=" + s3.URL,
		"SCCACHE_S3_KEY_PREFIX=/sccache/arm64-sm87-cuda12.6/", "AWS_ACCESS_KEY_ID=AKIASTANDIN", "AWS_SECRET_ACCESS_KEY=standin-secret"}

	out, code := buildWith(t, root, env...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "Cache location                  s3, name: sccache, prefix: /sccache/arm64-sm87-cuda12.6/")
	requireAll(t, compiles(out), "miss", out)
	keys, err := s3.Keys("sccache", "sccache/arm64-sm87-cuda12.6/")
	require.NoError(t, err)
	require.Len(t, keys, 5, "the check object and the four libraries: %v", keys)
	for _, r := range s3.Requests() {
		require.NotEqual(t, 403, r.Status, "every request is signed with the runner's key: %+v", r)
	}

	require.NoError(t, os.RemoveAll(filepath.Join(root, "sccache")))
	out, code = buildWith(t, root, env...)
	require.Equal(t, 0, code, out)
	requireAll(t, compiles(out), "hit", out)
	_, err = os.Stat(filepath.Join(root, "sccache"))
	require.True(t, os.IsNotExist(err), "nothing on the local disk")

	noRegion := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "SCCACHE_REGION=") })
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"unreachable", append(env, "SCCACHE_ENDPOINT=http://127.0.0.1:9"), "sccache: error: Server startup failed: cache storage failed to read: Unexpected (temporary) at GET"},
		{"wrong secret", append(env, "AWS_SECRET_ACCESS_KEY=wrong"), "Server startup failed: cache storage failed to read: PermissionDenied (persistent) at GET, context: { service: s3, status: 403 }"},
		{"no credentials", append(env, "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="), "no valid credential found and anonymous access is not allowed"},
		{"no region", noRegion, "Server startup failed: create s3 cache failed: ConfigInvalid (permanent) at Builder::build, context: { service: s3 } => region is missing"},
		// What BuildKit gives for a secret that was not given: its variable, empty.
		{"empty bucket", append(env, "SCCACHE_BUCKET="), "create s3 cache failed: ConfigInvalid (permanent) at Builder::build, context: { service: s3 } => The bucket is misconfigured"},
		{"empty endpoint", append(env, "SCCACHE_ENDPOINT="), "create s3 cache failed: input endpoint  is invalid"},
		{"bad bool", append(env, "SCCACHE_S3_USE_SSL=yes"), "sccache: error: SCCACHE_S3_USE_SSL must be 'true', 'on', '1', 'false', 'off' or '0'."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := buildWith(t, root, tc.env...)
			require.Equal(t, 101, code, out)
			require.Contains(t, out, "error: failed to run `rustc` to learn about target-specific information")
			require.Contains(t, out, tc.want)
			require.NotContains(t, out, "standin-secret")
		})
	}

	// Built without its S3 feature, sccache takes the bucket's settings and
	// caches on the local disk all the same.
	plain := sccacheRoot(t, k, "--version 0.10.0 --no-default-features")
	out, code = buildWith(t, plain, env...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `Cache location                  Local disk: "/sccache"`)
}

// sccache on GitHub's Actions cache, v2: the runtime token reaches the
// service on every call, the first runner creates an entry per library
// and a second one reads them. Without ACTIONS_CACHE_SERVICE_V2 sccache
// speaks the retired v1 API, which the service no longer serves: the build
// passes and nothing is ever cached. Without the token it does not start.
func TestStandinSccacheGHA(t *testing.T) {
	k := realKit(t)
	root := sccacheRoot(t, k, "--version 0.10.0 --no-default-features --features s3,gha")
	gha := cacheserver.NewGHA("standin-runtime-token")
	t.Cleanup(gha.Close)
	env := []string{"SCCACHE_GHA_ENABLED=on", "SCCACHE_GHA_VERSION=arm64-sm87-cuda12.6", "ACTIONS_CACHE_SERVICE_V2=on",
		"ACTIONS_RESULTS_URL=" + gha.URL, "ACTIONS_RUNTIME_TOKEN=standin-runtime-token"}

	out, code := buildWith(t, root, env...)
	require.Equal(t, 0, code, out)
	require.Regexp(t, `Cache location +ghac, name: [0-9a-f]{64}, prefix: /sccache/`, out)
	requireAll(t, compiles(out), "miss", out)
	require.Len(t, gha.Entries(), 5, "the check entry and the four libraries")
	for _, tok := range gha.Tokens() {
		require.Equal(t, "standin-runtime-token", tok)
	}
	out, code = buildWith(t, root, env...)
	require.Equal(t, 0, code, out)
	requireAll(t, compiles(out), "hit", out)
	require.NotContains(t, out, "read-only", "the check entry exists (409): the cache stays writable")

	v1 := []string{"SCCACHE_GHA_ENABLED=on", "ACTIONS_RESULTS_URL=" + gha.URL, "ACTIONS_RUNTIME_TOKEN=standin-runtime-token"}
	out, code = buildWith(t, root, v1...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "Cache mode                      read-only", "its write check failed when the server started")
	requireAll(t, compiles(out), "miss", out)

	out, code = buildWith(t, root, "SCCACHE_GHA_ENABLED=on", "ACTIONS_CACHE_SERVICE_V2=on", "ACTIONS_RESULTS_URL="+gha.URL)
	require.Equal(t, 101, code, out)
	require.Contains(t, out, "Server startup failed: create gha cache failed: ConfigInvalid (permanent) at Builder::build, context: { service: ghac } => ACTIONS_RUNTIME_TOKEN not found")
	out, code = buildWith(t, root, "SCCACHE_GHA_ENABLED=maybe")
	require.Equal(t, 101, code, out)
	require.Contains(t, out, "sccache: error: SCCACHE_GHA_ENABLED must be 'true', 'on', '1', 'false', 'off' or '0'.")
	require.False(t, strings.Contains(out, "standin-runtime-token"))
}
