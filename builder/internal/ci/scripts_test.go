package ci

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
)

// stub writes an executable NAME into a new folder that records its
// arguments, one a line, in $STUB_OUT/NAME.args, runs the shell snippet
// more, and exits with $STUB_EXIT; it returns the folder.
func stub(t *testing.T, name, more string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/usr/bin/env bash\nprintf '%s\\n' \"$@\" >>\"$STUB_OUT/" + name + ".args\"\n" + more + "\nexit \"${STUB_EXIT:-0}\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755))
	return dir
}

// run runs a script of the action with bash, with env added to this
// process's PATH and a few of its variables only, and returns its
// output and exit status.
func run(t *testing.T, script string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	_, err := exec.LookPath("bash")
	require.NoError(t, err, "bash is missing: run make deps")
	cmd := exec.CommandContext(t.Context(), "bash", append([]string{filepath.Join(root, script)}, args...)...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "LANG=C"}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		return out.String(), errOut.String(), exit.ExitCode()
	}
	return out.String(), errOut.String(), 0
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// The action's build step hands every kind of secret to jetbake build
// --secret: values through files only the job can read, which it removes
// at the end, variables and files by name, and the runner's GitHub Actions
// cache as Dockerfile-jetson's sccache secrets and in jetbake's
// environment. It prints no value, and refuses a line it cannot read by
// its number.
func TestBuildScript(t *testing.T) {
	tmp := t.TempDir()
	out := t.TempDir()
	runtime := filepath.Join(tmp, "jetbake-github-runtime")
	require.NoError(t, os.MkdirAll(runtime, 0o700))
	planted := map[string]string{"ACTIONS_RESULTS_URL": "https://results.example/planted-url/", "ACTIONS_RUNTIME_TOKEN": "planted-runtime-token",
		"ACTIONS_CACHE_SERVICE_V2": "True"}
	for k, v := range planted {
		require.NoError(t, os.WriteFile(filepath.Join(runtime, k), []byte(v), 0o600))
	}
	fileSecret := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(fileSecret, []byte("from a file"), 0o600))
	// The stub jetbake copies each src= secret and records the cache variables.
	bin := stub(t, "jetbake", `for a in "$@"; do
  case $a in id=*,src=*) f=${a#*,src=}; id=${a%%,*}; cp "$f" "$STUB_OUT/${id#id=}.secret"; stat -c %a "$f" >"$STUB_OUT/${id#id=}.mode" ;; esac
done
env | grep '^ACTIONS_' | sort >"$STUB_OUT/env"`)
	output := filepath.Join(out, "github_output")
	base := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "STUB_OUT=" + out, "RUNNER_TEMP=" + tmp, "GITHUB_OUTPUT=" + output,
		"MATRIX=matrix.json", "PROVENANCE=mode=max", "METADATA=jetbake-metadata.json", "PUSH=true", "BUILD_ARGS=--release jetpack6.2  --parallel 2",
		"SECRETS=GIT_AUTH_TOKEN.github.com=planted token value\n\n  spaced = x=y=z \r\n", "SECRET_ENVS=npm=MY_TOKEN", "MY_TOKEN=planted-env-value",
		"SECRET_FILES=key=" + fileSecret, "GITHUB_CACHE=true"}

	stdout, stderr, code := run(t, buildScript, base)
	require.Equal(t, 0, code, stdout+stderr)
	args := readLines(t, filepath.Join(out, "jetbake.args"))
	var srcs []string
	for i, a := range args {
		if strings.HasPrefix(a, "id=GIT_AUTH_TOKEN.github.com,src=") || strings.HasPrefix(a, "id=spaced,src=") {
			srcs = append(srcs, a)
			args[i] = strings.SplitN(a, ",src=", 2)[0] + ",src=FILE"
		}
	}
	require.Equal(t, []string{"build", "-f", "matrix.json", "--provenance", "mode=max", "--metadata-file", "jetbake-metadata.json",
		"--progress", "plain", "--check-lock", "--push",
		"--secret", "id=GIT_AUTH_TOKEN.github.com,src=FILE", "--secret", "id=spaced,src=FILE",
		"--secret", "id=npm,env=MY_TOKEN", "--secret", "id=key,src=" + fileSecret,
		"--secret", "id=actions_results_url,env=ACTIONS_RESULTS_URL", "--secret", "id=actions_runtime_token,env=ACTIONS_RUNTIME_TOKEN",
		"--release", "jetpack6.2", "--parallel", "2"}, args)
	for id, want := range map[string]string{"GIT_AUTH_TOKEN.github.com": "planted token value", "spaced": " x=y=z ", "key": "from a file"} {
		got, err := os.ReadFile(filepath.Join(out, id+".secret"))
		require.NoError(t, err)
		require.Equal(t, want, string(got), id)
	}
	require.Equal(t, "600", strings.TrimSpace(string(must(os.ReadFile(filepath.Join(out, "spaced.mode"))))), "only the job's user reads a secret's file")
	for _, src := range srcs {
		require.NoFileExists(t, strings.SplitN(src, ",src=", 2)[1], "the secret's file is removed")
	}
	require.NoDirExists(t, runtime, "the runner's cache variables are removed")
	require.Equal(t, []string{"ACTIONS_CACHE_SERVICE_V2=True", "ACTIONS_RESULTS_URL=https://results.example/planted-url/",
		"ACTIONS_RUNTIME_TOKEN=planted-runtime-token"}, readLines(t, filepath.Join(out, "env")), "type=gha caches find them")
	require.Equal(t, []string{"metadata-file=jetbake-metadata.json"}, readLines(t, output))
	for _, v := range []string{"planted token value", "planted-env-value", "planted-runtime-token", "planted-url"} {
		require.NotContains(t, stdout+stderr, v)
	}
	ents, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, ents, "nothing is left in the runner's temporary folder")

	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"no =", []string{"SECRETS=ok=1\nplanted-secret-without-id"}, "::error title=jetbake::secrets: line 2 is not ID=... (the secret's id, then =)"},
		{"bad id", []string{"SECRETS=a b=planted"}, "secrets: line 1: the id 'a b' may hold only letters, digits"},
		{"unset variable", []string{"SECRET_ENVS=npm=NOT_SET"}, "secret-envs: line 1: the variable NOT_SET is not set in the step's environment"},
		{"no file", []string{"SECRET_FILES=key=/nonexistent"}, "secret-files: line 1: /nonexistent is not a file"},
		{"no cache service", []string{"GITHUB_CACHE=true"}, "github-cache: the runner gave no ACTIONS_RESULTS_URL to the action's github-script step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "STUB_OUT=" + out, "RUNNER_TEMP=" + t.TempDir(),
				"MATRIX=matrix.json", "PROVENANCE=mode=min", "METADATA=m.json"}
			stdout, stderr, code := run(t, buildScript, append(env, tc.env...))
			require.Equal(t, 2, code, stdout+stderr)
			require.Contains(t, stdout, tc.want)
			require.NotContains(t, stdout+stderr, "planted-secret-without-id")
			require.NoFileExists(t, filepath.Join(out, "jetbake.args"), "jetbake did not run")
		})
	}

	// jetbake's failure is the step's, and the files still go.
	stdout, stderr, code = run(t, buildScript, append(slicesWithout(base, "GITHUB_CACHE="), "STUB_EXIT=1"))
	require.Equal(t, 1, code, stdout+stderr)
	ents, err = os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, ents)
}

func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The action's signing step signs every digest the metadata file says was
// pushed, by digest, keyless with the job's OIDC token or with the key
// given, and refuses to sign with neither.
func TestSignScript(t *testing.T) {
	report := imagebuild.Report{Releases: []imagebuild.ReleaseReport{
		{Name: "jetpack6.2", Outcome: imagebuild.Succeeded, Repository: "ghcr.io/acme/embedder", Digest: "sha256:" + strings.Repeat("a", 64)},
		{Name: "jetpack7.2", Outcome: imagebuild.Untagged, Repository: "ghcr.io/acme/embedder", Digest: "sha256:" + strings.Repeat("b", 64)},
		{Name: "jetpack5.1.2", Outcome: imagebuild.Failed, Error: "cargo failed"},
	}}
	data, err := json.Marshal(report)
	require.NoError(t, err)
	metadata := filepath.Join(t.TempDir(), "jetbake-metadata.json")
	require.NoError(t, os.WriteFile(metadata, data, 0o644))
	bin := stub(t, "cosign", "")
	refs := []string{"ghcr.io/acme/embedder@sha256:" + strings.Repeat("a", 64), "ghcr.io/acme/embedder@sha256:" + strings.Repeat("b", 64)}
	oidc := []string{"ACTIONS_ID_TOKEN_REQUEST_URL=https://token.example/", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=planted-oidc"}

	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"keyless", oidc, []string{"sign", "--yes", refs[0], "sign", "--yes", refs[1]}},
		{"key", []string{"COSIGN_KEY=env://COSIGN_PRIVATE_KEY"}, []string{"sign", "--yes", "--key", "env://COSIGN_PRIVATE_KEY", refs[0], "sign", "--yes", "--key", "env://COSIGN_PRIVATE_KEY", refs[1]}},
		{"key over OIDC", append([]string{"COSIGN_KEY=awskms:///alias/jetbake"}, oidc...), []string{"sign", "--yes", "--key", "awskms:///alias/jetbake", refs[0], "sign", "--yes", "--key", "awskms:///alias/jetbake", refs[1]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			stdout, stderr, code := run(t, signScript, append([]string{"PATH=" + bin + ":" + os.Getenv("PATH"), "STUB_OUT=" + out}, tc.env...), metadata)
			require.Equal(t, 0, code, stdout+stderr)
			require.Equal(t, tc.args, readLines(t, filepath.Join(out, "cosign.args")))
			require.NotContains(t, stdout+stderr, "planted-oidc")
		})
	}

	out := t.TempDir()
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "STUB_OUT=" + out}
	stdout, _, code := run(t, signScript, env, metadata)
	require.Equal(t, 2, code)
	require.Contains(t, stdout, "::error title=jetbake::sign: the job has no OIDC token for keyless signing: grant it (permissions: id-token: write), or give cosign-key")
	require.NoFileExists(t, filepath.Join(out, "cosign.args"))

	empty := filepath.Join(t.TempDir(), "m.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{"releases":[{"name":"jetpack6.2","outcome":"succeeded","tags":[]}]}`), 0o644))
	stdout, _, code = run(t, signScript, env, empty)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "lists no pushed digest: nothing to sign")

	stdout, _, code = run(t, signScript, append(append(env, oidc...), "STUB_EXIT=1"), metadata)
	require.NotEqual(t, 0, code, "a failed signature fails the step: %s", stdout)
	_, _, code = run(t, signScript, env, filepath.Join(t.TempDir(), "none.json"))
	require.Equal(t, 2, code)
}
