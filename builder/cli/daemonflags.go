package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/bake"
	"github.com/jetbake/jetbake/builder/daemon"
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
			return d, usageErrorf("%w", err)
		}
		d.Nodes = append(d.Nodes, fileSpecs...)
	}
	for _, v := range f.nodes {
		spec, err := daemon.ParseNodeFlag(v)
		if err != nil {
			return d, usageErrorf("%w", err)
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
