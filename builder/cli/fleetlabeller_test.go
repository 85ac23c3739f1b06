package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// --labeller takes the image of this jetbake's release, which a build of a
// checkout has none of; --labeller-image names one, and the DaemonSet
// gives only the arguments, so that the image's entrypoint, jetbake, runs.
func TestFleetLabellerImage(t *testing.T) {
	report := shippedReport(t)
	args := []string{"fleet", "-f", "../../matrix.json", "--metadata-file", report}
	r := run(t, append(args, "--labeller")...)
	requireOneSentence(t, r, "--labeller on a build that is not a release")
	require.Contains(t, r.stderr, "--labeller: jetbake ")
	require.Contains(t, r.stderr, " is not a release, so ghcr.io/jetbake/jetbake-labeller has no image for it: give --labeller-image IMAGE, e.g. one pushed with 'jetbake fleet --push-labeller REGISTRY/jetbake-labeller:TAG'\n")

	img := "registry.example/jetbake-labeller@sha256:" + strings.Repeat("c", 64)
	r = run(t, append(args, "--labeller-image", img)...)
	require.Equal(t, 0, r.code, r.stderr)
	ds := r.stdout[strings.Index(r.stdout, "# labeller-daemonset.yaml"):]
	require.Contains(t, ds, "image: "+img+"\n")
	require.Contains(t, ds, "      - args:\n        - doctor\n        - --sysroot\n        - /host\n        - --label-node\n        - $(NODE_NAME)\n")
	require.NotContains(t, ds, "command:", "the image's entrypoint runs")
}

// What --push-labeller cannot use is one sentence with the flag, the
// value and the fix, before any daemon is dialed.
func TestFleetPushLabellerBadInput(t *testing.T) {
	report := shippedReport(t)
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	empty := t.TempDir()
	dynamic := t.TempDir()
	data, err := os.ReadFile("/bin/ls") // Debian's: dynamic, of this machine
	require.NoError(t, err)
	for _, arch := range []string{"amd64", "arm64"} {
		require.NoError(t, os.WriteFile(filepath.Join(dynamic, "jetbake-linux-"+arch), data, 0o755))
	}
	push := []string{"fleet", "--push-labeller", "127.0.0.1:5000/jetbake-labeller:v0.3.0"}
	for _, tt := range []struct {
		env  string
		args []string
		want string
	}{
		{args: []string{"--labeller-binaries", empty}, want: "--labeller-binaries: " + filepath.Join(empty, "jetbake-linux-amd64") +
			" does not exist: the labeller image needs jetbake for linux/amd64: run 'make release' in jetbake's checkout (it writes dist/jetbake-linux-amd64 and dist/jetbake-linux-arm64), or give --labeller-binaries DIR with both\n"},
		{args: nil, want: "--labeller-binaries: dist/jetbake-linux-" + other + " does not exist: the labeller image needs jetbake for linux/" + other + ": run 'make release'"},
		{args: []string{"--labeller-binaries", dynamic}, want: filepath.Join(dynamic, "jetbake-linux-"+runtime.GOARCH) + " cannot be the labeller image's jetbake for linux/" + runtime.GOARCH +
			": it is linked dynamically (its loader is /lib"},
		{env: "1970-01-01", args: []string{"--labeller-binaries", empty}, want: `SOURCE_DATE_EPOCH "1970-01-01": want seconds since 1970 as a whole number`},
		{args: []string{"--out", "deploy"}, want: "--out: --push-labeller only makes and pushes the labeller image, and writes no manifests: run jetbake fleet again without --push-labeller, with --labeller-image 127.0.0.1:5000/jetbake-labeller:v0.3.0\n"},
		{args: []string{"--progress", "fancy"}, want: `--progress "fancy": use auto, tty, plain, rawjson, quiet or none`},
	} {
		t.Setenv("SOURCE_DATE_EPOCH", tt.env)
		r := run(t, append(push, tt.args...)...)
		requireOneSentence(t, r, strings.Join(tt.args, " "))
		require.Contains(t, r.stderr, tt.want)
		require.Empty(t, r.stdout)
	}

	r := run(t, "fleet", "--push-labeller", "jetbake-labeller")
	requireOneSentence(t, r, "a reference without a registry")
	require.Contains(t, r.stderr, `--push-labeller "jetbake-labeller" is not an image reference to push to (`)

	r = run(t, "fleet", "-f", "../../matrix.json", "--metadata-file", report, "--addr", "unix:///run/buildkit/buildkitd.sock")
	requireOneSentence(t, r, "--addr without --push-labeller")
	require.Equal(t, "--addr: it is for --push-labeller, which makes and pushes the labeller image; without it, fleet connects to no BuildKit daemon\n", r.stderr)

	r = run(t, "fleet", "-f", "../../matrix.json", "--metadata-file", report, "--format", "json")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stdout, "fleet writes its manifests as YAML; --format json is for --push-labeller's report")
}
