package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/client/llb"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/daemon"
)

// helperEnv makes the test binary act as one jetbake run using the shared
// local daemon (see TestDaemonUserHelper).
const helperEnv = "JETBAKE_DAEMON_USER_STATE"

// TestDaemonUserHelper is not a test: run as a subprocess with helperEnv
// set, it connects to the shared local daemon, prints "connected
// started=BOOL pid=PID", waits for a line on stdin, runs a small build,
// closes the connection and exits 0.
func TestDaemonUserHelper(t *testing.T) {
	state := os.Getenv(helperEnv)
	if state == "" {
		return
	}
	ctx := context.Background()
	root, err := FindRepoRoot()
	require.NoError(t, err)
	conn, err := daemon.Connect(ctx, daemon.WithBuildkitd(filepath.Join(root, "bin", "buildkitd")), daemon.WithStateDir(state))
	require.NoError(t, err)
	pid, _ := os.ReadFile(filepath.Join(state, "buildkitd.pid"))
	fmt.Printf("connected started=%v pid=%s\n", conn.Started, strings.TrimSpace(string(pid)))
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	def, err := llb.Scratch().File(llb.Mkfile("/hello", 0o644, []byte(fmt.Sprint(os.Getpid())))).Marshal(ctx)
	require.NoError(t, err)
	_, err = conn.Client.Solve(ctx, def, client.SolveOpt{}, nil)
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	fmt.Println("done")
}

type daemonUser struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

// Three runs start at once on one state folder: exactly one starts the
// daemon, the others reuse it. The starter is killed with SIGKILL; the two
// others still build, and the last one out stops the daemon it did not start.
func TestLocalDaemonConcurrentUsersOneKilled(t *testing.T) {
	prerequisites(t)
	state := t.TempDir()
	users := make([]*daemonUser, 3)
	for i := range users {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDaemonUserHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+state)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		users[i] = &daemonUser{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	starter, daemonPid := -1, 0
	for i, u := range users {
		line := readUntil(t, u.lines, "connected ")
		if strings.Contains(line, "started=true") {
			require.Equal(t, -1, starter, "only one run starts the daemon")
			starter = i
			var err error
			daemonPid, err = strconv.Atoi(strings.TrimPrefix(strings.Fields(line)[2], "pid="))
			require.NoError(t, err)
		}
	}
	require.NotEqual(t, -1, starter, "one run started the daemon")
	require.True(t, daemon.Running(daemonPid))
	t.Cleanup(func() { _ = syscall.Kill(daemonPid, syscall.SIGKILL) })

	require.NoError(t, users[starter].cmd.Process.Signal(syscall.SIGKILL))
	_ = users[starter].cmd.Wait()
	for i, u := range users {
		if i == starter {
			continue
		}
		_, err := io.WriteString(u.stdin, "go\n")
		require.NoError(t, err)
	}
	for i, u := range users {
		if i == starter {
			continue
		}
		readUntil(t, u.lines, "done")
		require.NoError(t, u.cmd.Wait(), "run %d builds although the run that started the daemon was killed", i)
	}
	require.Eventually(t, func() bool { return !daemon.Running(daemonPid) }, 15*time.Second, 100*time.Millisecond,
		"the last run out stops the daemon")
	_, err := os.Stat(filepath.Join(state, "buildkitd.pid"))
	require.ErrorIs(t, err, os.ErrNotExist, "no pid file is left")
}

// readUntil returns the first line of s that starts with prefix.
func readUntil(t *testing.T, s *bufio.Scanner, prefix string) string {
	t.Helper()
	for s.Scan() {
		if strings.HasPrefix(s.Text(), prefix) {
			return s.Text()
		}
	}
	require.FailNow(t, "helper ended before printing "+prefix, "%v", s.Err())
	return ""
}
