package e2e

import (
	"context"
	"slices"
)

// HostViews are the test bed's fake Jetsons (hosts), for tests outside
// this package that read a host's facts, such as the node labels of
// `jetbake doctor --node-labels`.
func HostViews() []FakeHost { return slices.Clone(hosts) }

// WriteFacts lays out the host's facts under root as WriteHosts does (soc0,
// the L4T release file, /proc/cpuinfo), without its stand-in driver: what
// the host rule reads of it.
func (h FakeHost) WriteFacts(root string) error {
	h.NoDriver = true
	_, err := h.write(context.Background(), "", root)
	return err
}
