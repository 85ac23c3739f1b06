package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// Host files of a Jetson that the entrypoint reads.
const (
	tegraReleasePath = "/etc/nv_tegra_release"
	socIDPath        = "/sys/devices/soc0/soc_id"
	socFamilyPath    = "/sys/devices/soc0/family"
)

// The device tree: /proc/device-tree links to /sys/firmware/devicetree/base,
// which is read when the link is missing.
const (
	deviceTreeDir  = "/proc/device-tree"
	firmwareDTDir  = "/sys/firmware/devicetree/base"
	compatibleName = "compatible"
	modelName      = "model"
)

// deviceTreeFiles returns the places of one device-tree property, in the
// order they are read.
func deviceTreeFiles(name string) [2]string {
	return [2]string{deviceTreeDir + "/" + name, firmwareDTDir + "/" + name}
}

// l4tVersion is a Jetson Linux (L4T) release such as 36.4.7.
type l4tVersion struct {
	Major, Minor, Patch int
}

// String writes v as "36.4.7".
func (v l4tVersion) String() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
}

// less reports whether v is an older release than o.
func (v l4tVersion) less(o l4tVersion) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

// jetPack names the JetPack of an L4T release for messages: "7.0" for
// 38.2.0, the series ("6") for releases not in compute_cap's table, or ""
// when the major is unknown.
func (v l4tVersion) jetPack() string {
	if r, ok := computecap.JetPackForL4TRelease(v.String()); ok {
		return r.JetPack
	}
	s, _ := computecap.JetPackForL4T(v.Major)
	return s
}

// parseTegraRelease reads the first line of /etc/nv_tegra_release, such as
// "# R36 (release), REVISION: 4.7, GCID: 42132812, BOARD: generic, ...",
// into 36.4.7.
func parseTegraRelease(data []byte) (l4tVersion, error) {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	text := strings.TrimSpace(string(line))
	rest, ok := strings.CutPrefix(text, "# R")
	if !ok {
		return l4tVersion{}, fmt.Errorf("first line %s does not start with \"# R<major>\"", quoteShort(text))
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	major, err := smallNumber(rest[:end])
	if err != nil {
		return l4tVersion{}, fmt.Errorf("first line %s: release major: %w", quoteShort(text), err)
	}
	revision := ""
	for _, field := range strings.Split(rest[end:], ",") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(field), "REVISION:"); ok {
			revision = strings.TrimSpace(r)
			break
		}
	}
	if revision == "" {
		return l4tVersion{}, fmt.Errorf("first line %s has no \"REVISION: <minor>.<patch>\" field", quoteShort(text))
	}
	v, err := parseL4TVersion(strconv.Itoa(major) + "." + revision)
	if err != nil {
		return l4tVersion{}, fmt.Errorf("first line %s: REVISION %s: %w", quoteShort(text), quoteShort(revision), err)
	}
	return v, nil
}

// parseL4TVersion reads "36", "36.4" or "36.4.3".
func parseL4TVersion(s string) (l4tVersion, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) > 3 {
		return l4tVersion{}, fmt.Errorf("L4T version %s has more than three parts", quoteShort(s))
	}
	var n [3]int
	for i, p := range parts {
		v, err := smallNumber(p)
		if err != nil {
			return l4tVersion{}, fmt.Errorf("L4T version %s: %w", quoteShort(s), err)
		}
		n[i] = v
	}
	if n[0] == 0 {
		return l4tVersion{}, fmt.Errorf("L4T version %s has major 0", quoteShort(s))
	}
	return l4tVersion{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

// smallNumber reads 1 to 4 decimal digits.
func smallNumber(s string) (int, error) {
	if len(s) == 0 || len(s) > 4 {
		return 0, fmt.Errorf("%s is not a number of 1 to 4 digits", quoteShort(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%s is not a number of 1 to 4 digits", quoteShort(s))
		}
	}
	return strconv.Atoi(s)
}

// parseCompatible splits a device-tree compatible property (NUL-separated
// strings, the board first and the SoC last) into its entries.
func parseCompatible(data []byte) []string {
	var out []string
	for entry := range strings.SplitSeq(string(data), "\x00") {
		if e := strings.TrimSpace(entry); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// socFromCompatible finds the Jetson SoC among compatible entries,
// searching from the last, where the SoC is.
func socFromCompatible(entries []string) (computecap.SoC, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		if soc, ok := computecap.SoCByCompatible(entries[i]); ok {
			return soc, true
		}
	}
	return computecap.SoC{}, false
}

// parseSocID reads /sys/devices/soc0/soc_id, a decimal number.
func parseSocID(data []byte) (int, error) {
	text := strings.TrimSpace(string(data))
	id, err := smallNumber(text)
	if err != nil {
		return 0, fmt.Errorf("soc_id: %w", err)
	}
	return id, nil
}

// parseModel reads /proc/device-tree/model, a NUL-terminated board name.
func parseModel(data []byte) string {
	name, _, _ := bytes.Cut(data, []byte{0})
	return strings.TrimSpace(string(name))
}

// quoteShort quotes s for a message, cut to 80 bytes.
func quoteShort(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strconv.Quote(s)
}
