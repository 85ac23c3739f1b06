package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/buildkit/client"
)

// localDaemon is this process's use of a buildkitd in a state folder that
// several jetbake runs may share. Two lock files guard it:
//
//   - start.lock is held exclusively while a run finds, starts or stops the
//     daemon, so that two runs never both start one, and a run never stops
//     the daemon another is about to reuse;
//   - use.lock is held shared for as long as a run uses the daemon; the run
//     that, on leaving, gets it exclusively is the last one out and stops a
//     daemon that jetbake started (a pid file marks it), unless it was
//     started with --keep-daemon.
//
// The kernel drops both locks of a run that dies, even by SIGKILL, so a
// killed run never keeps the daemon alive for ever nor blocks the others.
type localDaemon struct {
	startLock *os.File
	useLock   *os.File
	pidPath   string
	keep      bool
	logf      func(string, ...any)

	proc   *os.Process // set when this process started the daemon
	exited chan error  // receives the started daemon's exit
}

// lockFile opens path and takes a flock of kind how on it, waiting for it
// unless ctx ends first.
func lockFile(ctx context.Context, path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock buildkitd state folder: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// useLocal takes the start lock exclusively and the use lock shared. The
// caller reaches or starts the daemon, then calls ready to let other runs in.
func useLocal(ctx context.Context, stateDir string, keep bool, logf func(string, ...any)) (*localDaemon, error) {
	start, err := lockFile(ctx, filepath.Join(stateDir, "start.lock"), syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	use, err := lockFile(ctx, filepath.Join(stateDir, "use.lock"), syscall.LOCK_SH)
	if err != nil {
		start.Close()
		return nil, err
	}
	return &localDaemon{startLock: start, useLock: use, pidPath: filepath.Join(stateDir, "buildkitd.pid"), keep: keep, logf: logf}, nil
}

// ready releases the start lock: the daemon answers and other runs may reuse it.
func (l *localDaemon) ready() {
	if l.startLock != nil {
		l.startLock.Close()
		l.startLock = nil
	}
}

// start runs buildkitd on addr and waits until it answers. A daemon that a
// run killed while starting it left behind (its pid file names a live
// buildkitd) is waited for instead of started twice on the same root.
func (l *localDaemon) start(ctx context.Context, o options, addr string) (*client.Client, error) {
	if pid := l.recordedPid(); pid > 0 {
		o.logf("waiting for buildkitd (pid %d) that another jetbake started", pid)
		if c, err := waitAnswer(ctx, addr, o.startTimeout, nil); err == nil {
			return c, nil
		}
		l.stop(pid)
		_ = os.Remove(l.pidPath)
	}
	bin, err := findBuildkitd(o.buildkitd)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(o.stateDir, "buildkitd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create buildkitd log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "--root", filepath.Join(o.stateDir, "root"), "--addr", addr,
		"--oci-worker=true", "--containerd-worker=false")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: a Ctrl-C meant for jetbake must not kill the daemon mid-export.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	l.proc, l.exited = cmd.Process, make(chan error, 1)
	go func() { l.exited <- cmd.Wait() }()
	if !l.keep {
		if err := os.WriteFile(l.pidPath, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("write %s: %w", l.pidPath, err)
		}
	}
	o.logf("started buildkitd (pid %d) at %s, log %s", cmd.Process.Pid, addr, logPath)
	c, err := waitAnswer(ctx, addr, o.startTimeout, l.exited)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = os.Remove(l.pidPath)
		var exit *exitedError
		if errors.As(err, &exit) {
			l.proc = nil
			return nil, fmt.Errorf("buildkitd exited at start (%v); its log %s ends with: %s", exit.err, logPath, tail(logPath))
		}
		return nil, fmt.Errorf("%w; see %s", err, logPath)
	}
	return c, nil
}

// exitedError is a daemon's exit while waitAnswer waited for it.
type exitedError struct{ err error }

// Error says that buildkitd exited, and why.
func (e *exitedError) Error() string { return fmt.Sprintf("buildkitd exited: %v", e.err) }

// waitAnswer dials addr until it answers, the daemon exits (exited), ctx
// ends or timeout passes.
func waitAnswer(ctx context.Context, addr string, timeout time.Duration, exited <-chan error) (*client.Client, error) {
	deadline := time.Now().Add(timeout)
	for {
		c, err := dial(ctx, addr, TLS{})
		if err == nil {
			return c, nil
		}
		select {
		case werr := <-exited:
			return nil, &exitedError{err: werr}
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("buildkitd did not answer at %s within %s", addr, timeout)
		}
	}
}

// recordedPid is the pid in the pid file when it names a running
// buildkitd, else 0.
func (l *localDaemon) recordedPid() int {
	data, err := os.ReadFile(l.pidPath)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(filepath.Base(strings.SplitN(string(cmdline), "\x00", 2)[0]), "buildkitd") {
		return 0
	}
	return pid
}

// release ends this process's use. Under the start lock, so that no run
// reuses the daemon meanwhile, it tries to take the use lock exclusively:
// it gets it only when no other run uses the daemon, and then stops the
// daemon if it is jetbake's to stop.
func (l *localDaemon) release(ctx context.Context) {
	defer l.useLock.Close()
	if l.startLock == nil {
		start, err := lockFile(context.WithoutCancel(ctx), filepath.Join(filepath.Dir(l.pidPath), "start.lock"), syscall.LOCK_EX)
		if err != nil {
			l.logf("leaving buildkitd running: %v", err)
			return
		}
		l.startLock = start
	}
	defer l.ready()
	if err := syscall.Flock(int(l.useLock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		l.logf("buildkitd is still used by another jetbake; the last one stops it")
		return
	}
	if pid := l.recordedPid(); pid > 0 {
		l.stop(pid)
	}
	_ = os.Remove(l.pidPath)
}

// stop ends the daemon with SIGTERM, and SIGKILL after 10 seconds.
func (l *localDaemon) stop(pid int) {
	if l.proc != nil && l.proc.Pid == pid {
		_ = l.proc.Signal(syscall.SIGTERM)
		select {
		case <-l.exited:
		case <-time.After(10 * time.Second):
			_ = l.proc.Kill()
			<-l.exited
		}
		return
	}
	// Started by a run that has finished: not this process's child.
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !Running(pid) {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// Running reports whether process pid exists and has not exited (a zombie,
// exited but not yet reaped by its parent, counts as exited).
func Running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	_, rest, ok := strings.Cut(string(stat), ") ")
	return ok && !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
