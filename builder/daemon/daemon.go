// Package daemon connects to a BuildKit daemon, or starts and stops a local
// one, and checks that it can build linux/arm64 images before any build runs.
package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// TLS holds the client certificates for a tcp:// daemon, as buildctl takes them.
type TLS struct {
	// CACert is the CA certificate file that signed the daemon's certificate.
	CACert string
	// Cert and Key are the client certificate and key files.
	Cert, Key string
	// ServerName overrides the name checked in the daemon's certificate.
	ServerName string
}

// Connection is a BuildKit client and, when this package started the daemon,
// the way to stop it.
type Connection struct {
	// Client is the connected BuildKit client.
	Client *client.Client
	// Addr is the daemon's address.
	Addr string
	// Started reports whether Connect started the daemon.
	Started bool

	local *localDaemon // nil for a daemon reached by address
}

type options struct {
	addr         string
	tls          TLS
	buildkitd    string
	stateDir     string
	keepDaemon   bool
	startTimeout time.Duration
	logf         func(format string, args ...any)
}

// Option configures Connect.
type Option func(*options)

// WithAddr connects to the daemon at addr (unix://, tcp://,
// docker-container://, podman-container://, kube-pod://, ssh://) instead of
// starting a local one.
func WithAddr(addr string) Option { return func(o *options) { o.addr = addr } }

// WithTLS sets the client certificates for a tcp:// daemon.
func WithTLS(t TLS) Option { return func(o *options) { o.tls = t } }

// WithBuildkitd sets the buildkitd binary to start when no address is given.
func WithBuildkitd(path string) Option { return func(o *options) { o.buildkitd = path } }

// WithStateDir sets the folder that holds a started daemon's state and socket.
func WithStateDir(dir string) Option { return func(o *options) { o.stateDir = dir } }

// WithKeepDaemon leaves a daemon that Connect started running after Close.
func WithKeepDaemon(keep bool) Option { return func(o *options) { o.keepDaemon = keep } }

// WithLogf receives one line for each step Connect takes (starting, reusing).
func WithLogf(logf func(format string, args ...any)) Option {
	return func(o *options) { o.logf = logf }
}

// Connect returns a client for the daemon named by WithAddr, else BUILDKIT_HOST,
// else a local buildkitd that it reuses when running or starts otherwise.
func Connect(ctx context.Context, opts ...Option) (*Connection, error) {
	o := options{addr: os.Getenv("BUILDKIT_HOST"), startTimeout: 30 * time.Second, logf: func(string, ...any) {}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.addr != "" {
		if err := CheckAddr(o.addr); err != nil {
			return nil, err
		}
		c, err := dial(ctx, o.addr, o.tls)
		if err != nil {
			return nil, err
		}
		return &Connection{Client: c, Addr: o.addr}, nil
	}
	return startLocal(ctx, o)
}

func dial(ctx context.Context, addr string, t TLS) (*client.Client, error) {
	var copts []client.ClientOpt
	if t.CACert != "" {
		copts = append(copts, client.WithServerConfig(t.ServerName, t.CACert))
	}
	if t.Cert != "" || t.Key != "" {
		copts = append(copts, client.WithCredentials(t.Cert, t.Key))
	}
	c, err := client.New(ctx, addr, copts...)
	if err != nil {
		return nil, unreachable(addr, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Info(pingCtx); err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, unreachable(addr, err)
	}
	return c, nil
}

// DefaultStateDir is where a started daemon keeps its state: the user's
// cache folder. Without one it is a *StateDirError.
func DefaultStateDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", &StateDirError{Err: err}
	}
	return filepath.Join(dir, "jetbake", "buildkitd"), nil
}

func startLocal(ctx context.Context, o options) (*Connection, error) {
	if o.stateDir == "" {
		dir, err := DefaultStateDir()
		if err != nil {
			return nil, err
		}
		o.stateDir = dir
	}
	if err := os.MkdirAll(o.stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create buildkitd state folder: %w", err)
	}
	// Taken before the daemon is reached, so that two runs never both start
	// one, and a run finishing now does not stop the daemon this one is
	// about to use.
	local, err := useLocal(ctx, o.stateDir, o.keepDaemon, o.logf)
	if err != nil {
		return nil, err
	}
	addr := "unix://" + filepath.Join(o.stateDir, "buildkitd.sock")
	if c, err := dial(ctx, addr, TLS{}); err == nil {
		local.ready()
		o.logf("reusing buildkitd at %s", addr)
		return &Connection{Client: c, Addr: addr, local: local}, nil
	}
	c, err := local.start(ctx, o, addr)
	if err != nil {
		local.release(ctx)
		return nil, err
	}
	local.ready()
	return &Connection{Client: c, Addr: addr, Started: local.proc != nil, local: local}, nil
}

func findBuildkitd(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if exe, err := os.Executable(); err == nil {
		candidate := filepath.Join(filepath.Dir(exe), "buildkitd")
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
	}
	if p, err := exec.LookPath("buildkitd"); err == nil {
		return p, nil
	}
	return "", ErrNoBuildkitd
}

func tail(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}

// Close closes the client. A local daemon is stopped when this was the last
// jetbake using it and it was started without --keep-daemon.
func (c *Connection) Close() error {
	err := c.Client.Close()
	if c.local != nil {
		c.local.release(context.Background())
	}
	return err
}

// CheckPlatform fails unless some worker of the daemon builds platform:
// a *PlatformError, which says how to fix it, when none does.
func CheckPlatform(ctx context.Context, c *client.Client, platform string) error {
	want, err := platforms.Parse(platform)
	if err != nil {
		return fmt.Errorf("platform %q: %w", platform, err)
	}
	workers, err := c.ListWorkers(ctx)
	if err != nil {
		return fmt.Errorf("list buildkitd workers: %w", err)
	}
	var offered []string
	matcher := platforms.NewMatcher(want)
	for _, w := range workers {
		for _, p := range w.Platforms {
			if matcher.Match(p) {
				return nil
			}
			offered = append(offered, platforms.Format(p))
		}
	}
	return &PlatformError{Platform: platforms.Format(want), Offered: offered}
}

// Platforms lists the platforms the daemon's workers build.
func Platforms(ctx context.Context, c *client.Client) ([]ocispecs.Platform, error) {
	workers, err := c.ListWorkers(ctx)
	if err != nil {
		return nil, fmt.Errorf("list buildkitd workers: %w", err)
	}
	var out []ocispecs.Platform
	for _, w := range workers {
		out = append(out, w.Platforms...)
	}
	return out, nil
}
