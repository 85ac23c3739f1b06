// Package e2e sets up the whole path on one machine with no GPU and no
// internet: a registry on 127.0.0.1, a buildkitd built from the pinned
// BuildKit module (runc worker, arm64 through QEMU), stand-in NVIDIA bases,
// the entrypoint cross-compiled for arm64, and fake Jetson hosts to run the
// built images on with runc. `make demo` and the end-to-end tests share it.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/internal/nvtoolkit"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/plan"
)

// Env is a running registry and, once StartDaemon ran, a BuildKit daemon.
type Env struct {
	// RepoRoot is the jetbake checkout.
	RepoRoot string
	// WorkDir holds this run's state: sockets, daemon state, bundles.
	WorkDir string
	// Registry is the registry's host:port on 127.0.0.1.
	Registry string
	// Daemon is the BuildKit connection, after StartDaemon.
	Daemon *daemon.Connection

	server *http.Server
}

// FindRepoRoot walks up from the working folder to the folder holding go.mod.
func FindRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working folder: run from the jetbake checkout")
		}
		dir = parent
	}
}

// GitSource is the checkout's commit and commit time in seconds, which the
// entrypoint binaries of `make build` carry and the demo and the bench build
// with (their matrices are written outside the checkout); "" and "0" without git.
func GitSource(root string) (revision, epoch string) {
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	revision, epoch = git("rev-parse", "HEAD"), git("log", "-1", "--format=%ct")
	if epoch == "" {
		epoch = "0"
	}
	return revision, epoch
}

// Start starts the registry on 127.0.0.1 with state under workDir.
func Start(repoRoot, workDir string) (*Env, error) { return StartAt(repoRoot, workDir, "127.0.0.1:0") }

// StartAt starts the registry on addr, e.g. the address of an earlier
// registry so that image references (and so digests) come out the same.
func StartAt(repoRoot, workDir, addr string) (*Env, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for the registry: %w", err)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	return &Env{RepoRoot: repoRoot, WorkDir: workDir, Registry: ln.Addr().String(), server: srv}, nil
}

// BinDir is where `make deps` and `make build` put binaries.
func (e *Env) BinDir() string { return filepath.Join(e.RepoRoot, "bin") }

// Busybox is the unpacked Debian arm64 busybox-static.
func (e *Env) Busybox() string {
	return filepath.Join(e.BinDir(), "deps", "busybox-arm64", "bin", "busybox")
}

// Glibc is the unpacked Debian arm64 libc6 and libc-bin.
func (e *Env) Glibc() string { return filepath.Join(e.BinDir(), "deps", "glibc-arm64") }

// Python is the unpacked Debian arm64 Python 3 with pip (see deps.sh).
func (e *Env) Python() string { return filepath.Join(e.BinDir(), "deps", "python3-arm64") }

// Kit is what the stand-in bases are made from, with the compiled ELF
// stand-ins cached under bin/standin.
func (e *Env) Kit() standin.Kit {
	return standin.Kit{Busybox: e.Busybox(), Glibc: e.Glibc(), Python: e.Python(), Cache: filepath.Join(e.BinDir(), "standin"), Source: e.RepoRoot,
		Cross: e.Cross()}
}

// Cross is the unpacked Debian amd64 aarch64 cross compiler, its amd64
// libraries and busybox-static, which the stand-in cross build bases hold.
func (e *Env) Cross() string { return filepath.Join(e.BinDir(), "deps", "cross-amd64") }

// CheckPrerequisites fails with the fix when something the end-to-end path
// needs is missing: runc, the aarch64 binfmt handler, busybox, glibc, the
// aarch64 cross compiler, Debian's arm64 Python with pip (the stand-in
// PyTorch bases), buildkitd, NVIDIA's container toolkit, root.
func (e *Env) CheckPrerequisites() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (buildkitd's runc worker and runc need it)")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		missing = append(missing, "runc")
	}
	if _, err := os.Stat("/proc/sys/fs/binfmt_misc/qemu-aarch64"); err != nil {
		missing = append(missing, "the qemu-aarch64 binfmt handler")
	}
	if _, err := os.Stat(e.Busybox()); err != nil {
		missing = append(missing, "Debian's arm64 busybox-static at "+e.Busybox())
	}
	if _, err := os.Stat(filepath.Join(e.Glibc(), "sbin", "ldconfig")); err != nil {
		missing = append(missing, "Debian's arm64 libc6 and libc-bin at "+e.Glibc())
	}
	if _, err := os.Stat(filepath.Join(e.Python(), "usr", "lib", "python3", "dist-packages", "pip")); err != nil {
		missing = append(missing, "Debian's arm64 Python 3 with pip at "+e.Python())
	}
	if _, err := exec.LookPath("aarch64-linux-gnu-gcc"); err != nil {
		missing = append(missing, "Debian's gcc-aarch64-linux-gnu")
	}
	if _, err := os.Stat(filepath.Join(e.Cross(), "usr", "bin", "aarch64-linux-gnu-gcc")); err != nil {
		missing = append(missing, "Debian's amd64 aarch64 cross compiler at "+e.Cross())
	}
	if _, err := os.Stat(filepath.Join(e.BinDir(), "buildkitd")); err != nil {
		missing = append(missing, "bin/buildkitd")
	}
	if _, err := nvtoolkit.Find(e.BinDir()); err != nil {
		missing = append(missing, "NVIDIA's container toolkit in bin/ ("+err.Error()+")")
	}
	if len(missing) > 0 {
		return fmt.Errorf("the end-to-end environment lacks %v: run 'make deps' as root", missing)
	}
	return nil
}

// StartDaemon starts a buildkitd with its socket and state under stateDir
// (a per-run folder for tests; a kept one for the demo's cache).
func (e *Env) StartDaemon(ctx context.Context, stateDir string, keep bool) error {
	conn, err := daemon.Connect(ctx, daemon.WithBuildkitd(filepath.Join(e.BinDir(), "buildkitd")),
		daemon.WithStateDir(stateDir), daemon.WithKeepDaemon(keep))
	if err != nil {
		return err
	}
	e.Daemon = conn
	return nil
}

// PushStandins pushes a stand-in for every base image of p.
func (e *Env) PushStandins(ctx context.Context, p *plan.Plan) ([]string, error) {
	var pushed []string
	kit := e.Kit()
	for _, b := range standin.ForPlan(p) {
		ref, err := kit.Push(ctx, e.Registry, b)
		if err != nil {
			return nil, fmt.Errorf("push stand-in for %s: %w", b.Ref, err)
		}
		pushed = append(pushed, ref)
	}
	return pushed, nil
}

// BuildEntrypoint cross-compiles jetbake-entrypoint, jetbake-cudaprobe and
// jetbake-probe for linux/arm64 from this checkout into dir, reproducibly.
func (e *Env) BuildEntrypoint(ctx context.Context, dir string) error {
	for pkg, out := range map[string]string{"./entrypoint": "jetbake-entrypoint", "./entrypoint/cudaprobe": "jetbake-cudaprobe",
		"./entrypoint/probe": "jetbake-probe"} {
		if err := GoBuild(ctx, e.RepoRoot, pkg, "arm64", filepath.Join(dir, out), "-buildvcs=false", "-ldflags=-s -w -buildid="); err != nil {
			return err
		}
	}
	return nil
}

// GoBuild compiles the Go package pkg of the checkout at root for
// linux/goarch, statically, into out.
func GoBuild(ctx context.Context, root, pkg, goarch, out string, flags ...string) error {
	args := append(append([]string{"build", "-trimpath"}, flags...), "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if data, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s for linux/%s: %w: %s", pkg, goarch, err, data)
	}
	return nil
}

// Close stops the daemon (unless kept) and the registry.
func (e *Env) Close() error {
	var errs []error
	if e.Daemon != nil {
		errs = append(errs, e.Daemon.Close())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	errs = append(errs, e.server.Shutdown(ctx))
	return errors.Join(errs...)
}
