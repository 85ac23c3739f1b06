package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jetbake/jetbake/builder/internal/runimage"
)

// maxUnixSocket is the longest path a unix socket may have on Linux (108
// bytes with the NUL); dockerd's managed containerd puts its sockets about
// 40 bytes below the exec root.
const maxUnixSocket = 107

// Dockerd is a Docker engine started for one run: its own data root, exec
// root and socket under one folder, no iptables rules and no bridge, so that
// it leaves nothing behind on the machine and never meets another engine.
// It is the engine from Debian's docker.io that `make deps` installs.
type Dockerd struct {
	// Host is the engine's address for the docker client, unix://DIR/docker.sock.
	Host string
	// Log is dockerd's output.
	Log string

	dir    string
	client string
	cmd    *exec.Cmd
	exited chan struct{}
}

// DockerdOption changes how StartDockerd starts dockerd.
type DockerdOption func(*[]string)

// WithRuntime registers an OCI runtime with dockerd under name, as
// `dockerd --add-runtime NAME=PATH` does (`docker run --runtime NAME`).
func WithRuntime(name, path string) DockerdOption {
	return func(args *[]string) { *args = append(*args, "--add-runtime", name+"="+path) }
}

// StartDockerd starts dockerd with its state under dir and waits until it
// answers (within a minute). It fails with the reason, never silently: the
// missing binary and its fix, or the end of dockerd's log.
func StartDockerd(ctx context.Context, dir string, opts ...DockerdOption) (*Dockerd, error) {
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		return nil, errors.New("dockerd is not installed: run 'make deps' as root (apt-get install docker.io)")
	}
	client, err := exec.LookPath("docker")
	if err != nil {
		return nil, errors.New("the docker client is not installed: run 'make deps' as root (apt-get install docker.io)")
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("dockerd needs root: run the Docker-engine tests as root")
	}
	execRoot := filepath.Join(dir, "exec")
	if n := len(execRoot) + len("/containerd/containerd.sock.ttrpc"); n > maxUnixSocket {
		return nil, fmt.Errorf("dockerd state folder %s is too long for unix sockets (%d > %d bytes): use a shorter one", dir, n, maxUnixSocket)
	}
	if err := os.MkdirAll(filepath.Join(dir, "client"), 0o700); err != nil {
		return nil, err
	}
	d := &Dockerd{
		Host:   "unix://" + filepath.Join(dir, "docker.sock"),
		Log:    filepath.Join(dir, "dockerd.log"),
		dir:    dir,
		client: client,
		exited: make(chan struct{}),
	}
	logFile, err := os.Create(d.Log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := []string{
		"--host", d.Host,
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", execRoot,
		"--pidfile", filepath.Join(dir, "dockerd.pid"),
		"--iptables=false", "--ip-masq=false", "--bridge=none",
	}
	for _, o := range opts {
		o(&args)
	}
	d.cmd = exec.Command(dockerd, args...)
	d.cmd.Stdout, d.cmd.Stderr = logFile, logFile
	// Its own process group: dockerd's managed containerd can be stopped
	// with it, by this pid, if dockerd does not stop by itself.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dockerd: %w", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.exited) }()
	if err := d.waitReady(ctx, time.Minute); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

// waitReady polls the engine until it answers, dockerd exits or the time is up.
func (d *Dockerd) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		res, err := d.Docker(ctx, "version", "--format", "{{.Server.Version}}")
		if err == nil && res.ExitCode == 0 {
			return nil
		}
		select {
		case <-d.exited:
			return fmt.Errorf("dockerd exited while starting: %s", d.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dockerd did not answer within %s: %s %s", limit, strings.TrimSpace(res.Stderr), d.logTail())
		}
	}
}

// logTail is the last lines of dockerd's log, for errors.
func (d *Dockerd) logTail() string {
	data, _ := os.ReadFile(d.Log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return "dockerd log (" + d.Log + "): " + strings.Join(lines, "\n")
}

// Docker runs the docker client against this engine, with its own client
// configuration folder, and returns what it printed and its exit code. The
// error is set only when the client could not run at all.
func (d *Dockerd) Docker(ctx context.Context, args ...string) (runimage.Result, error) {
	cmd := exec.CommandContext(ctx, d.client, append([]string{"--host", d.Host}, args...)...)
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+filepath.Join(d.dir, "client"), "DOCKER_CLI_HINTS=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := runimage.Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		return res, fmt.Errorf("docker %s: %w", strings.Join(args, " "), err)
	}
	return res, nil
}

// Close stops dockerd by its pid (SIGTERM, then SIGKILL to its process group
// after 30 seconds) and waits for it to exit.
func (d *Dockerd) Close() error {
	if d.cmd == nil || d.cmd.Process == nil {
		return nil
	}
	select {
	case <-d.exited:
		return nil
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		return nil
	case <-time.After(30 * time.Second):
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.exited
	return fmt.Errorf("dockerd (pid %d) did not stop within 30s and was killed", d.cmd.Process.Pid)
}
