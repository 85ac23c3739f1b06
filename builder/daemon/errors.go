package daemon

import (
	"errors"
	"fmt"
	"strings"
)

// The errors of this file are inputs and setups this package cannot
// connect with. Their text names the input as this package does (WithAddr,
// WithStateDir, a NodeSpec); a command that took it from a flag reads
// their fields and names its flag instead.

// ErrNoBuildkitd is Connect with no address (WithAddr, BUILDKIT_HOST) and
// no buildkitd to start: none given with WithBuildkitd, none next to this
// program and none on PATH.
var ErrNoBuildkitd = errors.New("no BuildKit daemon: give its address (WithAddr or BUILDKIT_HOST), or put buildkitd next to this program or on PATH")

// NodeValueError is a NAME=ADDR value that ParseNode cannot read.
type NodeValueError struct {
	// Value is the value as given.
	Value string
	// Name is the node's name, when the value has one and Err is set.
	Name string
	// Err is what is wrong with the address (see CheckAddr); nil when the
	// value is not NAME=ADDR at all.
	Err error
}

// NodeExample is a NAME=ADDR value, as ParseNode reads it.
const NodeExample = "orin-1=tcp://10.0.0.5:1234"

// Error names the value and the fix.
func (e *NodeValueError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("node %q: want NAME=ADDR, e.g. %s", e.Value, NodeExample)
	}
	return fmt.Sprintf("node %s: %v", e.Name, e.Err)
}

// Unwrap returns Err.
func (e *NodeValueError) Unwrap() error { return e.Err }

// NoNodeError is a cluster (ConnectNodes) none of whose nodes answers and
// builds the platform; each node's own cause went to the log before it.
type NoNodeError struct {
	// Nodes are the names of the nodes, in the order given.
	Nodes []string
	// Platform is the platform asked for.
	Platform string
}

// Error names the nodes and the fixes.
func (e *NoNodeError) Error() string {
	return e.Problem() + ": fix the nodes named in the lines above, or build on one daemon (Connect) instead"
}

// Problem is the error's first part, without the fix.
func (e *NoNodeError) Problem() string {
	return fmt.Sprintf("none of the %d BuildKit nodes (%s) can build %s", len(e.Nodes), strings.Join(e.Nodes, ", "), e.Platform)
}

// StateDirError is a local buildkitd without a state folder: none given
// with WithStateDir, and no user cache folder to put it in.
type StateDirError struct {
	// Err is why there is no user cache folder.
	Err error
}

// Error says why and the fix.
func (e *StateDirError) Error() string {
	return fmt.Sprintf("find a folder for buildkitd's state: %v (give one with WithStateDir)", e.Err)
}

// Unwrap returns Err.
func (e *StateDirError) Unwrap() error { return e.Err }

// PlatformError is a daemon none of whose workers builds Platform.
type PlatformError struct {
	// Platform is the platform asked for; Offered those the workers build.
	Platform string
	Offered  []string
}

// Error names the platforms and the fix.
func (e *PlatformError) Error() string {
	return e.Problem() + ": register QEMU user emulation for aarch64 (the binfmt_misc handler of qemu-user-static) " +
		"and restart buildkitd, or use a native arm64 daemon"
}

// Problem is the error's first part, without the fix.
func (e *PlatformError) Problem() string {
	return fmt.Sprintf("no buildkitd worker builds %s (offered: %s)", e.Platform, strings.Join(e.Offered, ", "))
}
