package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/bake"
	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/inputfile"
)

// daemonFlags say where BuildKit runs, for build and check.
type daemonFlags struct {
	addr       string
	tls        daemon.TLS
	keepDaemon bool
	stateDir   string
	buildkitd  string
	// nodes and buildersFile are build's --node and --builders.
	nodes        []string
	buildersFile string
}

// addDaemonFlags adds the flags of the one daemon to cmd.
func addDaemonFlags(cmd *cobra.Command, f *daemonFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "", "BuildKit daemon address: unix://, tcp://, ... (default: BUILDKIT_HOST, else a local buildkitd)")
	fl.StringVar(&f.tls.CACert, "tlscacert", "", "CA certificate of a tcp:// daemon")
	fl.StringVar(&f.tls.Cert, "tlscert", "", "client certificate for a tcp:// daemon")
	fl.StringVar(&f.tls.Key, "tlskey", "", "client key for a tcp:// daemon")
	fl.StringVar(&f.tls.ServerName, "tlsservername", "", "name to check in the daemon's certificate")
	fl.BoolVar(&f.keepDaemon, "keep-daemon", false, "leave a buildkitd that jetbake started running")
	fl.StringVar(&f.stateDir, "state-dir", "", "state folder of a buildkitd that jetbake starts (default: user cache folder)")
	fl.StringVar(&f.buildkitd, "buildkitd", "", "buildkitd binary to start (default: next to jetbake, else on PATH)")
}

// daemons reads the nodes of --builders and --node and checks them, and
// the address of --addr or BUILDKIT_HOST, before anything is dialed.
func (f *daemonFlags) daemons() (bake.Daemons, error) {
	d := bake.Daemons{TLS: f.tls}
	if f.buildersFile != "" {
		fileSpecs, err := daemon.ReadBuildersFile(f.buildersFile)
		if err != nil {
			return d, buildersFlagError(err)
		}
		d.Nodes = append(d.Nodes, fileSpecs...)
	}
	for _, v := range f.nodes {
		spec, err := daemon.ParseNode(v)
		if err != nil {
			return d, nodeFlagError(err)
		}
		d.Nodes = append(d.Nodes, spec)
	}
	if err := daemon.CheckNodes(d.Nodes); err != nil {
		return d, usageErrorf("%w", err)
	}
	addr, name := f.addr, "--addr"
	if addr == "" {
		addr, name = os.Getenv("BUILDKIT_HOST"), "BUILDKIT_HOST"
	}
	if addr != "" {
		if err := daemon.CheckAddr(addr); err != nil {
			return d, usageErrorf("%s: %w", name, err)
		}
	}
	d.Daemon = []daemon.Option{daemon.WithKeepDaemon(f.keepDaemon)}
	if f.addr != "" {
		d.Daemon = append(d.Daemon, daemon.WithAddr(f.addr))
	}
	if f.stateDir != "" {
		d.Daemon = append(d.Daemon, daemon.WithStateDir(f.stateDir))
	}
	if f.buildkitd != "" {
		d.Daemon = append(d.Daemon, daemon.WithBuildkitd(f.buildkitd))
	}
	return d, nil
}

// unreachableFix is the fix of a daemon at --addr or BUILDKIT_HOST that
// does not answer, for the schemes whose fix is a flag; "" for the others.
func unreachableFix(scheme string) string {
	switch scheme {
	case "unix":
		return "start buildkitd there, or point --addr or BUILDKIT_HOST at a running daemon"
	case "tcp":
		return "check that buildkitd listens there and that --tlscacert, --tlscert and --tlskey match its certificates"
	}
	return ""
}

// buildersFlagError words a --builders file that daemon.ReadBuildersFile
// cannot take: one it cannot read names the flag; a problem in the file
// names the file, its line and column already.
func buildersFlagError(err error) error {
	var unread *inputfile.Error
	if errors.As(err, &unread) {
		return usageErrorf("--builders: %w", err)
	}
	return usageErrorf("%w", err)
}

// nodeFlagError words a --node value that daemon.ParseNode cannot read.
func nodeFlagError(err error) error {
	var ve *daemon.NodeValueError
	switch {
	case !errors.As(err, &ve):
		return usageErrorf("%w", err)
	case ve.Err == nil:
		return usageErrorf("--node %q: want NAME=ADDR, e.g. --node %s", ve.Value, daemon.NodeExample)
	}
	return usageErrorf("--node %s: %w", ve.Name, ve.Err)
}

// daemonFlagError rewords the typed errors of package daemon, which name
// its options, as sentences that name the daemon flags of build and check
// and jetbake's checkout ('make deps' builds bin/buildkitd). A daemon that
// does not answer or cannot build arm64 is reworded only when it is the
// whole error; a node's cause, which went to the log, keeps daemon's words.
// Other errors are returned as they are.
func daemonFlagError(err error) error {
	var (
		stateDir    *daemon.StateDirError
		noNode      *daemon.NoNodeError
		platform    *daemon.PlatformError
		unreachable *daemon.UnreachableError
	)
	switch {
	case errors.Is(err, daemon.ErrNoBuildkitd):
		return reword(err, "no BuildKit daemon: give --addr or BUILDKIT_HOST, or build bin/buildkitd with 'make deps' (it sits next to bin/jetbake)")
	case errors.As(err, &stateDir):
		return fmt.Errorf("find a folder for buildkitd's state: %w (set --state-dir)", stateDir.Err)
	case errors.As(err, &noNode):
		return reword(err, "%s: fix the nodes named in the lines above, or build without --node to use a local daemon", noNode.Problem())
	case errors.As(err, &platform) && err.Error() == platform.Error():
		return reword(err, "%s: register QEMU user emulation for aarch64 (apt-get install qemu-user-static, then 'make deps' registers the binfmt handler) "+
			"and restart buildkitd, or point --addr at a native arm64 node", platform.Problem())
	case errors.As(err, &unreachable) && err.Error() == unreachable.Error():
		if fix := unreachableFix(unreachable.Scheme); fix != "" {
			worded := *unreachable
			worded.Fix = fix
			return &worded
		}
	}
	return err
}
