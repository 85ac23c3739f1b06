package bake

import (
	"context"

	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/plan"
)

// Daemons are the BuildKit daemons a build runs on: Nodes, or when there
// are none the one daemon that Daemon's options name.
type Daemons struct {
	// Nodes are the nodes releases are spread over (daemon.ConnectNodes).
	Nodes []daemon.NodeSpec
	// TLS is the client's TLS for a tcp:// daemon, and for each node that
	// sets none of its own.
	TLS daemon.TLS
	// Daemon are the options of the one daemon when there are no Nodes
	// (daemon.Connect): its address, or the state folder and binary of a
	// local buildkitd and whether it is left running.
	Daemon []daemon.Option
}

// Connect connects to the daemons of d, each checked to build linux/arm64,
// and returns them as imagebuild's nodes with the function that closes
// them. logf gets the lines of a local buildkitd's start and stop.
func Connect(ctx context.Context, d Daemons, logf func(string, ...any)) ([]imagebuild.Node, func(), error) {
	var conns []daemon.Node
	if len(d.Nodes) == 0 {
		opts := append([]daemon.Option{daemon.WithTLS(d.TLS), daemon.WithLogf(logf)}, d.Daemon...)
		conn, err := daemon.Connect(ctx, opts...)
		if err != nil {
			return nil, nil, err
		}
		if err := daemon.CheckPlatform(ctx, conn.Client, plan.Platform); err != nil {
			conn.Close()
			return nil, nil, err
		}
		conns = []daemon.Node{{Name: "default", Conn: conn}}
	} else {
		var err error
		if conns, err = daemon.ConnectNodes(ctx, d.Nodes, plan.Platform, d.TLS, logf); err != nil {
			return nil, nil, err
		}
	}
	nodes := make([]imagebuild.Node, len(conns))
	for i, c := range conns {
		nodes[i] = imagebuild.Node{Name: c.Name, Client: c.Conn.Client}
	}
	return nodes, func() { daemon.CloseNodes(conns) }, nil
}
