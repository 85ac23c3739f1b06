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
// several jetbake runs may share. Each holds a shared lock on the folder
// while it uses the daemon; the last one out stops a daemon that jetbake
// started (a pid file marks it), unless it was started with --keep-daemon.
type localDaemon struct {
	lock    *os.File
	pidPath string
	keep    bool
	logf    func(string, ...any)

	proc   *os.Process // set when this process started the daemon
	exited chan error  // receives the started daemon's exit
}

func useLocal(stateDir string, keep bool, logf func(string, ...any)) (*localDaemon, error) {
	f, err := os.OpenFile(filepath.Join(stateDir, "jetbake.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock buildkitd state folder: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock buildkitd state folder: %w", err)
	}
	return &localDaemon{lock: f, pidPath: filepath.Join(stateDir, "buildkitd.pid"), keep: keep, logf: logf}, nil
}

// start runs buildkitd on addr and waits until it answers.
func (l *localDaemon) start(ctx context.Context, o options, addr string) (*client.Client, error) {
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
	deadline := time.Now().Add(o.startTimeout)
	for {
		c, err := dial(ctx, addr, TLS{})
		if err == nil {
			return c, nil
		}
		select {
		case werr := <-l.exited:
			l.proc = nil
			_ = os.Remove(l.pidPath)
			return nil, fmt.Errorf("buildkitd exited at start (%v); its log %s ends with: %s", werr, logPath, tail(logPath))
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("buildkitd did not answer at %s within %s; see %s", addr, o.startTimeout, logPath)
		}
	}
}

// release ends this process's use. If no other jetbake holds the folder and
// the daemon is jetbake's to stop, it stops it.
func (l *localDaemon) release() {
	defer l.lock.Close()
	if err := syscall.Flock(int(l.lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		l.logf("buildkitd is still used by another jetbake; the last one stops it")
		return
	}
	data, err := os.ReadFile(l.pidPath)
	if err != nil {
		return // kept (--keep-daemon) or not started by jetbake: leave it
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err == nil {
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
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
