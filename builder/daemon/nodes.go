package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"

	"github.com/jetbake/jetbake/builder/inputfile"
)

// NodeSpec names one BuildKit daemon of a cluster and how to reach it.
type NodeSpec struct {
	// Name identifies the node in progress and metadata, e.g. "orin-1".
	Name string `json:"name"`
	// Addr is the daemon's address: unix://, tcp://, kube-pod://, ...
	Addr string `json:"addr"`
	// TLS holds client certificates for tcp:// daemons.
	TLS *TLSFile `json:"tls,omitempty"`
}

// TLSFile is the TLS part of a builders file.
type TLSFile struct {
	// CACert, Cert and Key are file paths.
	CACert string `json:"ca_cert,omitempty"`
	Cert   string `json:"cert,omitempty"`
	Key    string `json:"key,omitempty"`
	// ServerName overrides the name checked in the daemon's certificate.
	ServerName string `json:"server_name,omitempty"`
}

// BuildersFile is the file `--builders` reads:
//
//	{"nodes": [{"name": "orin-1", "addr": "tcp://orin-1:1234",
//	            "tls": {"ca_cert": "ca.pem", "cert": "cert.pem", "key": "key.pem"}}]}
type BuildersFile struct {
	// Nodes are the daemons to spread releases over.
	Nodes []NodeSpec `json:"nodes"`
}

// ParseNodeFlag parses a `--node NAME=ADDR` value.
func ParseNodeFlag(v string) (NodeSpec, error) {
	name, addr, ok := strings.Cut(v, "=")
	if !ok || name == "" || !strings.Contains(addr, "://") {
		return NodeSpec{}, fmt.Errorf("--node %q: want NAME=ADDR, e.g. --node orin-1=tcp://10.0.0.5:1234", v)
	}
	if err := CheckAddr(addr); err != nil {
		return NodeSpec{}, fmt.Errorf("--node %s: %w", name, err)
	}
	return NodeSpec{Name: name, Addr: addr}, nil
}

// ReadBuildersFile reads and checks a builders file.
func ReadBuildersFile(path string) ([]NodeSpec, error) {
	data, err := inputfile.Read(path, "builders file")
	if err != nil {
		return nil, fmt.Errorf("--builders: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f BuildersFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("--builders %s: %w (want {\"nodes\": [{\"name\": ..., \"addr\": ...}]})", path, err)
	}
	seen := map[string]bool{}
	for i, n := range f.Nodes {
		switch {
		case n.Name == "":
			return nil, fmt.Errorf("--builders %s: nodes[%d].name is empty: give every node a name", path, i)
		case !strings.Contains(n.Addr, "://"):
			return nil, fmt.Errorf("--builders %s: nodes[%d].addr %q: want an address such as tcp://host:1234", path, i, n.Addr)
		case CheckAddr(n.Addr) != nil:
			return nil, fmt.Errorf("--builders %s: nodes[%d]: %w", path, i, CheckAddr(n.Addr))
		case seen[n.Name]:
			return nil, fmt.Errorf("--builders %s: nodes[%d].name %q is used twice: node names must be unique", path, i, n.Name)
		}
		seen[n.Name] = true
	}
	if len(f.Nodes) == 0 {
		return nil, fmt.Errorf("--builders %s: no nodes", path)
	}
	return f.Nodes, nil
}

// Kill stops a daemon that Connect started at once, as a crash would (tests
// of failover use it). It does nothing for a daemon Connect did not start.
func (c *Connection) Kill() error {
	if c.local == nil || c.local.proc == nil {
		return nil
	}
	return c.local.proc.Signal(syscall.SIGKILL)
}
