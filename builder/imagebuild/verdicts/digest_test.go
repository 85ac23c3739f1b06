package verdicts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/solver/pb"
	digest "github.com/opencontainers/go-digest"
	"github.com/stretchr/testify/require"
)

// The digest step's script, run by this machine's sh on folders laid out
// as the step mounts them, gives each router's sha256 and one of the
// runtime stage's files, and each changes when the bytes it covers do: a
// router's, a runtime file's content, mode or link target, a file more.
func TestDigestScript(t *testing.T) {
	dir := t.TempDir()
	const output = "/usr/local/bin/text-embeddings-router"
	for _, d := range []string{"router-0", "router-1", "runtime/usr/lib", "out"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	write := func(name, content string, mode os.FileMode) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), mode))
		require.NoError(t, os.Chmod(filepath.Join(dir, name), mode))
	}
	write("router-0/text-embeddings-router", "router for sm_87", 0o755)
	write("router-1/text-embeddings-router", "router for sm_110", 0o755)
	write("runtime/usr/lib/libssl.so.3", "openssl 3.0.2", 0o644)
	write("runtime/usr/lib/name with spaces", "x", 0o644)
	require.NoError(t, os.Symlink("libssl.so.3", filepath.Join(dir, "runtime/usr/lib/libssl.so")))
	digests := func() (routers [2]string, runtime string) {
		t.Helper()
		out, err := exec.Command("sh", "-c", script(dir, 2, output, true)).CombinedOutput()
		require.NoError(t, err, string(out))
		for i := range routers {
			data, err := os.ReadFile(filepath.Join(dir, "out", RouterFile(i)))
			require.NoError(t, err)
			routers[i], err = Parse(data, "a router")
			require.NoError(t, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "out", RuntimeFile))
		require.NoError(t, err)
		runtime, err = Parse(data, "the runtime stage")
		require.NoError(t, err)
		return routers, runtime
	}
	routers, runtime := digests()
	require.Equal(t, digest.FromString("router for sm_87").String(), routers[0], "sha256 of the bytes")
	require.NotEqual(t, routers[0], routers[1])
	again, sameRuntime := digests()
	require.Equal(t, routers, again, "the same bytes, the same digests")
	require.Equal(t, runtime, sameRuntime)

	write("router-1/text-embeddings-router", "router for sm_110, rebuilt", 0o755)
	changed, sameRuntime := digests()
	require.Equal(t, routers[0], changed[0])
	require.NotEqual(t, routers[1], changed[1], "a router's bytes changed")
	require.Equal(t, runtime, sameRuntime, "the runtime stage did not")

	seen := map[string]string{runtime: "the first build"}
	for name, change := range map[string]func(){
		"a library's bytes":  func() { write("runtime/usr/lib/libssl.so.3", "openssl 3.0.13", 0o644) },
		"a file with spaces": func() { write("runtime/usr/lib/name with spaces", "y", 0o644) },
		"a library's mode":   func() { require.NoError(t, os.Chmod(filepath.Join(dir, "runtime/usr/lib/libssl.so.3"), 0o600)) },
		"a link's target": func() {
			require.NoError(t, os.Remove(filepath.Join(dir, "runtime/usr/lib/libssl.so")))
			require.NoError(t, os.Symlink("other", filepath.Join(dir, "runtime/usr/lib/libssl.so")))
		},
		"one file more":         func() { write("runtime/usr/lib/libcrypto.so.3", "", 0o644) },
		"one empty folder more": func() { require.NoError(t, os.Mkdir(filepath.Join(dir, "runtime/etc"), 0o755)) },
	} {
		change()
		_, d := digests()
		require.NotContains(t, seen, d, "%s gives the digest of %s", name, seen[d])
		seen[d] = name
	}
}

func TestParse(t *testing.T) {
	d, err := Parse([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef  -\n"), "x")
	require.NoError(t, err)
	require.Equal(t, "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", d)
	for _, bad := range []string{"", "sh: sha256sum: not found", "0123456789abcdef  -", "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef  x"} {
		_, err := Parse([]byte(bad), "router-87")
		require.ErrorContains(t, err, "the daemon gave no sha256 of router-87", bad)
	}
}

// The step mounts every router's folder and the runtime stage read-only
// and writes only its out folder.
func TestDigestsStep(t *testing.T) {
	base := llb.Image("registry.example/l4t-jetpack@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	r0 := base.Run(llb.Shlex("build 87")).Root()
	r1 := base.Run(llb.Shlex("build 110")).Root()
	runtimeBase := llb.Image("registry.example/l4t-cuda@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	stage := runtimeBase.Run(llb.Shlex("apt-get install -y libssl3")).Root()
	def, err := Digests([]llb.State{r0, r1}, "/usr/local/bin/text-embeddings-router", &runtimeBase, stage).Marshal(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, def.Def)
	other, err := Digests([]llb.State{r0, r1}, "/usr/local/bin/text-embeddings-router", nil, runtimeBase).Marshal(t.Context())
	require.NoError(t, err)
	require.NotEqual(t, def.Def[len(def.Def)-1], other.Def[len(other.Def)-1], "the runtime stage is an input of its own")
	var env []string
	for _, dt := range def.Def {
		var op pb.Op
		require.NoError(t, op.UnmarshalVT(dt))
		if e := op.GetExec(); e != nil && strings.Contains(strings.Join(e.Meta.Args, " "), "sha256sum") {
			env = e.Meta.Env
		}
	}
	// Not the router stage's: its locale or quoting style would change %N's text.
	require.Contains(t, env, "LC_ALL=C")
	require.Contains(t, env, "QUOTING_STYLE=shell-escape-always")
}
