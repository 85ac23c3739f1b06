package daemon

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap"
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

// BuildersFile is the file ReadBuildersFile reads:
//
//	{"nodes": [{"name": "orin-1", "addr": "tcp://orin-1:1234",
//	            "tls": {"ca_cert": "ca.pem", "cert": "cert.pem", "key": "key.pem"}}]}
type BuildersFile struct {
	// Nodes are the daemons to spread releases over.
	Nodes []NodeSpec `json:"nodes"`
}

// ParseNode parses a NAME=ADDR value, such as NodeExample. A value it
// cannot read is a *NodeValueError.
func ParseNode(v string) (NodeSpec, error) {
	name, addr, ok := strings.Cut(v, "=")
	if !ok || name == "" || !strings.Contains(addr, "://") {
		return NodeSpec{}, &NodeValueError{Value: v}
	}
	if err := CheckAddr(addr); err != nil {
		return NodeSpec{}, &NodeValueError{Value: v, Name: name, Err: err}
	}
	return NodeSpec{Name: name, Addr: addr}, nil
}

// buildersFix is the fix of a builders file that does not read.
const buildersFix = `write it as {"nodes": [{"name": "orin-1", "addr": "tcp://orin-1:1234"}]}`

// ReadBuildersFile reads and checks a builders file. A problem is a
// *matrix.FileError naming the file, the line and column, the field, the
// value and the fix, as the matrix's errors do; a file that cannot be
// read is an *inputfile.Error.
func ReadBuildersFile(path string) ([]NodeSpec, error) {
	data, err := inputfile.Read(path, "builders file")
	if err != nil {
		return nil, err
	}
	var f BuildersFile
	doc, err := matrix.DecodeFile(path, data, &f, buildersFix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, n := range f.Nodes {
		at := "nodes[" + strconv.Itoa(i) + "]"
		switch {
		case n.Name == "":
			return nil, doc.Problem(at+".name", "", "is empty", "give every node a name, such as \"orin-1\"")
		case !strings.Contains(n.Addr, "://"):
			return nil, doc.Problem(at+".addr", computecap.QuoteShort(n.Addr), "is not a BuildKit address", "write it like \"tcp://host:1234\"")
		case CheckAddr(n.Addr) != nil:
			return nil, doc.Problem(at+".addr", computecap.QuoteShort(n.Addr), CheckAddr(n.Addr).Error(), "use a scheme BuildKit knows")
		case seen[n.Name]:
			return nil, doc.Problem(at+".name", computecap.QuoteShort(n.Name), "is used twice", "node names must be unique")
		}
		seen[n.Name] = true
	}
	if len(f.Nodes) == 0 {
		return nil, doc.Problem("nodes", "", "lists no node", buildersFix)
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
