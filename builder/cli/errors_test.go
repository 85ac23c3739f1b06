package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/entrypoints"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/entrypointdir"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/selection"
	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/plan"
)

// A matrix jetbake cannot take is one sentence on stderr and exit status 2
// in every command; with --format json, stdout holds the same as JSON.
func TestBadMatrixFileEveryCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	files := []struct{ path, want string }{
		{filepath.Join(dir, "none.json"), "does not exist: run 'jetbake init'"},
		{dir, "is a folder: name the file itself"},
		{write("big.json", []byte("{"+strings.Repeat(" ", 1<<20)+"}")), "is over the limit of 1 MiB (1048576 bytes)"},
		{write("bom.json", []byte("\xef\xbb\xbf{}")), "starts with a UTF-8 byte order mark"},
		{write("latin1.json", []byte("{\"a\": \"caf\xe9\"}")), "is not valid UTF-8 at byte offset 10"},
	}
	commands := [][]string{{"validate"}, {"plan"}, {"compat", "8.7"}, {"lock"}, {"build"}}
	for _, f := range files {
		for _, args := range commands {
			t.Run(filepath.Base(f.path)+"/"+args[0], func(t *testing.T) {
				r := run(t, append(args, "-f", f.path)...)
				require.Equal(t, ExitUsage, r.code, r.stderr)
				require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
				require.Contains(t, r.stderr, "matrix file "+f.path+" "+f.want)
			})
		}
		for _, args := range [][]string{{"validate"}, {"plan"}, {"lock"}} {
			r := run(t, append(args, "-f", f.path, "--format", "json")...)
			require.Equal(t, ExitUsage, r.code)
			var got jsonError
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), "stdout is JSON: %q", r.stdout)
			require.Contains(t, got.Error, f.want)
			require.Equal(t, ExitUsage, got.ExitCode)
		}
	}
}

// Flags and the matrix are checked before a daemon is started or dialed:
// the address given would fail the test if it were dialed.
func TestBuildChecksBeforeDialing(t *testing.T) {
	path := matrixCopy(t, nil)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--release", "jetpack9"}, `--release: unknown release "jetpack9": the matrix has`},
		{[]string{"--release", "jetpack6.2", "--release", "jetpack6.2"}, `--release "jetpack6.2" is given twice`},
		{[]string{"--list", "releases", "--release", "jetpack9"}, `--release: unknown release "jetpack9": the matrix has`},
		{[]string{"--output", "type=registry,dest=out"}, `--output "type=registry,dest=out": type must be oci or docker (use --push for a registry)`},
		{[]string{"--node", "a=tcp://127.0.0.1:1", "--node", "a=tcp://127.0.0.1:2"}, `BuildKit node name "a" is used twice`},
		{[]string{"--node", "a=docker://x"}, `--node a: BuildKit address "docker://x": scheme "docker" is not known`},
		{[]string{"--node", "orin-1"}, `--node "orin-1": want NAME=ADDR, e.g. --node orin-1=tcp://10.0.0.5:1234`},
		{[]string{"--builders", "/nonexistent/builders.json"}, "--builders: builders file /nonexistent/builders.json does not exist"},
		{[]string{"--mirror", "nvcr.io"}, `--mirror "nvcr.io": want REGISTRY=HOST[:PORT], e.g. --mirror nvcr.io=127.0.0.1:5000`},
		{[]string{"--output", "type=oci,dest=a", "--output", "type=oci,dest=b"}, "--output type=oci is given twice: one of each type at most"},
		{[]string{"--progress", "tty"}, "--progress tty: failed to get console"},
		{[]string{"--metadata-file", "/nonexistent-jetbake/build.json"}, "cannot write /nonexistent-jetbake/build.json: the folder /nonexistent-jetbake does not exist"},
		{[]string{"--addr", "127.0.0.1:1234"}, "--addr: BuildKit address \"127.0.0.1:1234\" is not an address"},
		{[]string{"--progress", "fancy"}, `--progress "fancy"`},
		{[]string{"--secret", "id=x,env=JETBAKE_TEST_UNSET_VARIABLE"}, `--secret "id=x,env=JETBAKE_TEST_UNSET_VARIABLE": the environment variable`},
		{[]string{"--ssh", "deploy=/nonexistent/key"}, `--ssh "deploy=/nonexistent/key"`},
		{[]string{"--sbom", "generator=Bad Ref"}, `--sbom "generator=Bad Ref"`},
		{[]string{"--cache-to", "type=redis"}, `--cache-to "type=redis": type "redis" is not a BuildKit cache`},
		{[]string{"--format", "yaml"}, `--format "yaml" is not known`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := run(t, append([]string{"build", "-f", path, "--buildkitd", "/nonexistent/buildkitd", "--state-dir", t.TempDir()}, tt.args...)...)
			require.Equal(t, ExitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tt.want)
			require.NotContains(t, r.stderr, "started buildkitd")
			require.NotContains(t, r.stderr, "/nonexistent/buildkitd")
		})
	}
	t.Setenv("BUILDKIT_HOST", "docker://x")
	r := run(t, "build", "-f", path)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `BUILDKIT_HOST: BuildKit address "docker://x": scheme "docker" is not known`)
}

// The typed errors of imagebuild, lock, entrypoints and daemon become
// sentences that name build's flags: the sentences they had when those
// packages named the flags themselves. A flag's value the build cannot
// take is bad usage, exit status 2, as the README says.
func TestFlagError(t *testing.T) {
	tests := []struct {
		err  error
		want string
		code int
	}{
		{imagebuild.ErrNoRepository, "--push needs image.repository in the matrix", ExitUsage},
		{&localoutput.Error{Value: "type=oci", Problem: "is given twice: one of each type at most", Repeated: true},
			"--output type=oci is given twice: one of each type at most", ExitUsage},
		{&localoutput.Error{Value: "dest=out", Problem: "type must be oci or docker", NotLocal: true},
			`--output "dest=out": type must be oci or docker (use --push for a registry)`, ExitUsage},
		{&progress.Error{Mode: "tty", Err: errors.New("not a terminal")}, "--progress tty: not a terminal", ExitUsage},
		{&entrypointdir.Error{}, "no entrypoint binaries: set --entrypoint-dir to the folder with the linux/arm64 jetbake-entrypoint, jetbake-cudaprobe and jetbake-probe ('make build' puts them in bin/linux-arm64)", ExitFailure},
		{&entrypointdir.Error{Dir: "/ep", Missing: "jetbake-cudaprobe"}, "entrypoint folder /ep lacks jetbake-cudaprobe: run 'make build' (it cross-compiles them for linux/arm64)", ExitFailure},
		{&entrypointdir.Error{Dir: "/ep", Binary: "/ep/jetbake-entrypoint", BuiltFrom: "1111111111111111", Tool: "2222222222222222"},
			"/ep/jetbake-entrypoint was built from jetbake commit 111111111111 but this jetbake is commit 222222222222: run 'make build' so that the image gets the entrypoint of the jetbake that builds it, or leave out --entrypoint-dir", ExitFailure},
		{&selection.DuplicateError{Name: "jetpack6.2"}, `--release "jetpack6.2" is given twice`, ExitUsage},
		{&plan.UnknownReleaseError{Names: []string{"x"}, Valid: []string{"jetpack6.2"}}, `--release: unknown release "x": the matrix has jetpack6.2`, ExitUsage},
		{&lock.NoLockFileError{Path: "/m/matrix.lock.json"}, "--check-lock: no lock file at /m/matrix.lock.json; run 'jetbake lock' first", ExitUsage},
		{&lock.OutsideError{Path: "/m/matrix.lock.json", Leads: "leads to /etc/x, outside the matrix's repository /m"},
			"lock file /m/matrix.lock.json leads to /etc/x, outside the matrix's repository /m: replace the link with the file, or name the file with --lock-file", ExitUsage},
		{&entrypoints.MissingError{Problem: "the source of jetbake v1 is not in the module cache at /c: run 'go install x@v1' again"},
			"the source of jetbake v1 is not in the module cache at /c: run 'go install x@v1' again, or give --entrypoint-dir", ExitFailure},
		{daemon.ErrNoBuildkitd, "no BuildKit daemon: give --addr or BUILDKIT_HOST, or build bin/buildkitd with 'make deps' (it sits next to bin/jetbake)", ExitFailure},
		{&daemon.StateDirError{Err: errors.New("$HOME is not defined")}, "find a folder for buildkitd's state: $HOME is not defined (set --state-dir)", ExitFailure},
		{&daemon.NoNodeError{Nodes: []string{"a", "b"}, Platform: "linux/arm64"},
			"none of the 2 BuildKit nodes (a, b) can build linux/arm64: fix the nodes named in the lines above, or build without --node to use a local daemon", ExitFailure},
		{&daemon.PlatformError{Platform: "linux/arm64", Offered: []string{"linux/amd64"}},
			"no buildkitd worker builds linux/arm64 (offered: linux/amd64): register QEMU user emulation for aarch64 (apt-get install qemu-user-static, " +
				"then 'make deps' registers the binfmt handler) and restart buildkitd, or point --addr at a native arm64 node", ExitFailure},
		{&daemon.UnreachableError{Addr: "tcp://h:1", Scheme: "tcp", Cause: "refused", Fix: "daemon's words"},
			"BuildKit at tcp://h:1 does not answer (refused): check that buildkitd listens there and that --tlscacert, --tlscert and --tlskey match its certificates", ExitFailure},
		{&daemon.UnreachableError{Addr: "ssh://h", Scheme: "ssh", Cause: "refused", Fix: "daemon's words"}, "BuildKit at ssh://h does not answer (refused): daemon's words", ExitFailure},
		{fmt.Errorf("node a is left out: %w", &daemon.UnreachableError{Addr: "unix:///s", Scheme: "unix", Cause: "gone", Fix: "daemon's words"}),
			"node a is left out: BuildKit at unix:///s does not answer (gone): daemon's words", ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			err := flagError(tt.err)
			require.EqualError(t, err, tt.want)
			require.Equal(t, tt.code, ExitCode(err))
		})
	}
	other := errors.New("the build failed")
	require.Same(t, other, flagError(other))
	require.NoError(t, flagError(nil))
}

// A GitHub Actions cache outside a workflow is no usage error: the build
// leaves it out with a warning, as buildx does, so one command line serves
// a workflow and a laptop. (Here the build goes on to the daemon, which is
// not there.)
func TestBuildGHACacheOutsideAWorkflow(t *testing.T) {
	for _, v := range []string{"ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL", "ACTIONS_RUNTIME_TOKEN"} {
		t.Setenv(v, "")
		require.NoError(t, os.Unsetenv(v))
	}
	r := run(t, "build", "-f", matrixCopy(t, nil), "--addr", "unix:///nonexistent/buildkitd.sock", "--entrypoint-dir", t.TempDir(),
		"--cache-to", "type=gha,mode=max", "--cache-from", "type=gha")
	require.Equal(t, ExitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "does not answer")
	require.NotContains(t, r.stderr, "requires url")
}

// An unreachable daemon is one sentence without gRPC text, exit status 1.
func TestBuildUnreachableDaemon(t *testing.T) {
	r := run(t, "build", "-f", matrixCopy(t, nil), "--addr", "unix:///nonexistent/buildkitd.sock", "--entrypoint-dir", t.TempDir())
	require.Equal(t, ExitFailure, r.code)
	require.Equal(t, "BuildKit at unix:///nonexistent/buildkitd.sock does not answer (dial unix /nonexistent/buildkitd.sock: connect: no such file or directory): "+
		"start buildkitd there, or point --addr or BUILDKIT_HOST at a running daemon\n", r.stderr)
}

// TestHostileMatrixEveryCommand hands the matrix reader what a pull
// request could: local paths that reach the building machine's files, and
// a FIFO in place of the matrix. Each command refuses at once, naming the
// field and the fix: validate with its finding (exit status 1), the others
// with bad input (2).
func TestHostileMatrixEveryCommand(t *testing.T) {
	commands := [][]string{{"validate"}, {"plan", "--format", "json"}, {"lock"}, {"build"}, {"check"}}
	for _, tt := range []struct {
		name, context, dockerfile, want string
	}{
		{"context /", "/", "Dockerfile", `router.context: "/": local context folder / is outside the matrix's repository`},
		{"context climbing out", "../../../../../../..", "Dockerfile", `router.context: "../../../../../../..": local context folder`},
		{"Dockerfile /etc/passwd", ".", "/etc/passwd", `router.dockerfile: "/etc/passwd": Dockerfile /etc/passwd is outside the matrix's repository`},
		{"Dockerfile climbing out", ".", "../../../../../../../etc/passwd", `Dockerfile /etc/passwd is outside the matrix's repository`},
	} {
		path := matrixCopy(t, func(doc map[string]any) {
			r := doc["router"].(map[string]any)
			r["context"], r["dockerfile"] = tt.context, tt.dockerfile
		})
		require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), "Dockerfile"), []byte("FROM scratch\n"), 0o644))
		for _, args := range commands {
			r := run(t, append(args, "-f", path)...)
			want := ExitUsage
			if args[0] == "validate" {
				want = ExitFailure
			}
			require.Equal(t, want, r.code, "%s %v: %s", tt.name, args, r.stderr)
			require.Contains(t, r.stderr, tt.want, "%s %v", tt.name, args)
			require.Contains(t, r.stderr, "--allow fs.read=")
			require.NotContains(t, r.stdout, `"context": "/"`)
		}
	}

	fifo := filepath.Join(t.TempDir(), "matrix.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan result, 1)
	go func() { done <- run(t, "validate", "-f", fifo) }()
	select {
	case r := <-done:
		require.Equal(t, ExitUsage, r.code)
		require.Contains(t, r.stderr, "matrix file "+fifo+" is a named pipe (FIFO), not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("validate blocks on a FIFO")
	}
}

// TestLongArgumentsAreCut gives compat a 100,000-character capability.
func TestLongArgumentsAreCut(t *testing.T) {
	long := strings.Repeat("8.7", 100000/3)
	r := run(t, "compat", long)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `"`+long[:80]+`"... (99999 bytes) is not valid`)
	require.Less(t, len(r.stderr), 400)
	r = run(t, "compat", "8.7", long)
	require.Equal(t, ExitUsage, r.code)
	require.Less(t, len(r.stderr), 400)
}

// TestInitNamesNoTemporaryFile writes the matrix into a folder that does
// not exist.
func TestInitNamesNoTemporaryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodir", "sub", "matrix.json")
	r := run(t, "init", "-f", path)
	require.Equal(t, ExitUsage, r.code)
	require.Equal(t, "cannot write "+path+": the folder "+filepath.Dir(path)+" does not exist: create it first, or name another file\n", r.stderr)
}
