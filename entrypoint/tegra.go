package main

import (
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// The host files and their parsers live in package host, which the builder
// shares; these names keep the entrypoint's code short.
const (
	tegraReleasePath = host.TegraReleasePath
	socIDPath        = host.SocIDPath
	socFamilyPath    = host.SocFamilyPath
	socMachinePath   = host.SocMachinePath
	compatibleName   = "compatible"
	modelName        = "model"
)

// l4tVersion is a Jetson Linux (L4T) release such as 36.4.7.
type l4tVersion = computecap.L4TVersion

// deviceTreeFiles returns the places of one device-tree property, in the
// order they are read.
func deviceTreeFiles(name string) [2]string { return host.DeviceTreeFiles(name) }

// parseTegraRelease reads the first line of /etc/nv_tegra_release.
func parseTegraRelease(data []byte) (l4tVersion, error) { return host.ParseTegraRelease(data) }

// parseL4TVersion reads "36", "36.4" or "36.4.3".
func parseL4TVersion(s string) (l4tVersion, error) { return computecap.ParseL4TVersion(s) }

// parseCompatible splits a device-tree compatible property into its entries.
func parseCompatible(data []byte) []string { return host.ParseCompatible(data) }

// socFromCompatible finds the Jetson SoC of the shipped table among
// compatible entries (Table.SoCFromCompatible).
func socFromCompatible(entries []string) (computecap.SoC, bool) {
	return computecap.DefaultTable().SoCFromCompatible(entries)
}

// parseSocID reads /sys/devices/soc0/soc_id, a decimal number.
func parseSocID(data []byte) (int, error) { return host.ParseSocID(data) }

// parseModel reads a NUL-terminated board name.
func parseModel(data []byte) string { return host.ParseModel(data) }

// quoteShort quotes s for a message, cut to 80 bytes.
func quoteShort(s string) string { return host.QuoteShort(s) }
