package daemon

import (
	"context"
	"fmt"
)

// Node is a connected daemon of a cluster.
type Node struct {
	// Name is the node's name, from its NodeSpec.
	Name string
	// Conn is the connection to it.
	Conn *Connection
}

// NodeError is a node left out of a cluster, and why.
type NodeError struct {
	// Name and Addr are the node's.
	Name, Addr string
	// Err is why it was left out: an *UnreachableError, or a platform it cannot build.
	Err error
}

// Error names the node and carries the cause and fix.
func (e *NodeError) Error() string {
	return fmt.Sprintf("node %s is left out: %v", e.Name, e.Err)
}

// Unwrap returns Err.
func (e *NodeError) Unwrap() error { return e.Err }

// CheckNodes checks a cluster's specs before any is dialed: a name and a
// known address for each, and no name twice.
func CheckNodes(specs []NodeSpec) error {
	seen := map[string]string{}
	for _, s := range specs {
		if s.Name == "" {
			// ParseNode and ReadBuildersFile refuse a node without a name:
			// only a NodeSpec built in code reaches this.
			return fmt.Errorf("a BuildKit node at %s has no name: give each node a name, such as orin-1", s.Addr)
		}
		if prev, dup := seen[s.Name]; dup {
			return fmt.Errorf("BuildKit node name %q is used twice (%s and %s): give each node its own name", s.Name, prev, s.Addr)
		}
		seen[s.Name] = s.Addr
		if err := CheckAddr(s.Addr); err != nil {
			return fmt.Errorf("node %s: %w", s.Name, err)
		}
	}
	return nil
}

// ConnectNodes connects to every node of specs that answers and builds
// platform, reporting each left-out node through logf as a *NodeError
// naming the node, the cause and the fix. It fails with a *NoNodeError
// when no node is left.
// The caller closes the returned nodes' connections.
func ConnectNodes(ctx context.Context, specs []NodeSpec, platform string, defaultTLS TLS, logf func(string, ...any)) ([]Node, error) {
	if err := CheckNodes(specs); err != nil {
		return nil, err
	}
	var nodes []Node
	var left []string
	for _, spec := range specs {
		tls := defaultTLS
		if spec.TLS != nil {
			tls = TLS{CACert: spec.TLS.CACert, Cert: spec.TLS.Cert, Key: spec.TLS.Key, ServerName: spec.TLS.ServerName}
		}
		conn, err := Connect(ctx, WithAddr(spec.Addr), WithTLS(tls))
		if err == nil {
			if err = CheckPlatform(ctx, conn.Client, platform); err != nil {
				conn.Close()
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				CloseNodes(nodes)
				return nil, ctx.Err()
			}
			logf("%v", &NodeError{Name: spec.Name, Addr: spec.Addr, Err: err})
			left = append(left, spec.Name)
			continue
		}
		nodes = append(nodes, Node{Name: spec.Name, Conn: conn})
	}
	if len(nodes) == 0 {
		return nil, &NoNodeError{Nodes: left, Platform: platform}
	}
	return nodes, nil
}

// CloseNodes closes every node's connection.
func CloseNodes(nodes []Node) {
	for _, n := range nodes {
		n.Conn.Close()
	}
}
