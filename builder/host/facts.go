// Package host is a Jetson host as jetbake's operator commands (doctor and
// pick) see it: the facts read from its files, and the rule that says whether
// an image runs on it.
//
// PLACEHOLDER: ReadSysroot and Compatible stand in for the shared host
// detection and compatibility rule that the entrypoint uses. When that shared
// package lands, SysrootReader.Read and Compatible become thin calls into it;
// the Reader interface, Facts, Image and Verdict are the seam that doctor and
// pick depend on, and they do not change.
package host

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	computecap "github.com/jetbake/jetbake/compute_cap"
)

// L4T is a Jetson Linux release such as 36.4.3.
type L4T struct {
	// Major, Minor and Patch are its numbers; Major 0 means none.
	Major, Minor, Patch int
}

// String writes v as "36.4.3", or "" for none.
func (v L4T) String() string {
	if v.Major == 0 {
		return ""
	}
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
}

// ParseL4T reads "36", "36.4" or "36.4.3"; ok is false for anything else.
func ParseL4T(s string) (L4T, bool) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) > 3 {
		return L4T{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || len(p) > 4 {
			return L4T{}, false
		}
		n[i] = v
	}
	if n[0] == 0 {
		return L4T{}, false
	}
	return L4T{Major: n[0], Minor: n[1], Patch: n[2]}, true
}

// Facts is what jetbake knows of a host.
type Facts struct {
	// Model is the board's device-tree model, such as
	// "NVIDIA Jetson AGX Orin Developer Kit"; "" when unknown.
	Model string `json:"model,omitempty"`
	// SoC is the Tegra SoC ("tegra234"); "" when none was found.
	SoC string `json:"soc,omitempty"`
	// Family is the Jetson family of the SoC ("Orin").
	Family string `json:"family,omitempty"`
	// GPU is the GPU's compute capability; zero when no GPU was found.
	GPU computecap.Capability `json:"gpu"`
	// L4T is the release in /etc/nv_tegra_release; zero when absent.
	L4T L4T `json:"-"`
	// L4TVersion is L4T as text, for JSON.
	L4TVersion string `json:"l4t,omitempty"`
	// JetPack is the JetPack release of L4T ("6.2"), or its series ("6").
	JetPack string `json:"jetpack,omitempty"`
	// DriverCUDA is the CUDA version the driver supports; zero when unknown.
	DriverCUDA computecap.CUDAVersion `json:"driver_cuda"`
	// DriverCUDAFrom says where DriverCUDA comes from.
	DriverCUDAFrom string `json:"driver_cuda_from,omitempty"`
	// Libcuda is the path of libcuda.so.1 in the host's root; "" when none.
	Libcuda string `json:"libcuda,omitempty"`
}

// Jetson reports whether the facts name a Jetson: a Tegra SoC and an L4T release.
func (f Facts) Jetson() bool { return f.SoC != "" && f.L4T.Major != 0 }

// Reader reads a host's facts from the root of its file system ("/" for
// this machine, or a board's root mounted elsewhere).
type Reader interface {
	// Read returns the facts of the host whose root is sysroot.
	Read(ctx context.Context, sysroot string) (Facts, error)
}

// SysrootReader is the placeholder Reader: it reads the files the NVIDIA
// runtime shows a Jetson's containers, under a root folder. It asks no
// driver; the driver's CUDA version comes from the L4T release table.
// Replace with the shared host detection.
type SysrootReader struct{}

// Host files read, relative to the root.
const (
	tegraReleasePath = "etc/nv_tegra_release"
	socIDPath        = "sys/devices/soc0/soc_id"
	socFamilyPath    = "sys/devices/soc0/family"
)

// deviceTreeDirs hold the device tree: /proc/device-tree links to the
// firmware folder, which is read when the link is missing.
func deviceTreeDirs() [2]string {
	return [2]string{"proc/device-tree", "sys/firmware/devicetree/base"}
}

// libcudaDirs are where JetPack 5, 6 and 7 and desktop drivers put libcuda.so.1.
func libcudaDirs() [5]string {
	return [5]string{
		"usr/lib/aarch64-linux-gnu/nvidia", // JetPack 6
		"usr/lib/aarch64-linux-gnu/tegra",  // JetPack 5
		"usr/lib/aarch64-linux-gnu",        // JetPack 7
		"usr/lib/x86_64-linux-gnu",
		"usr/lib64",
	}
}

// Read implements Reader.
func (SysrootReader) Read(_ context.Context, sysroot string) (Facts, error) {
	root := rootFS(sysroot)
	var f Facts
	if data, ok := root.read(tegraReleasePath); ok {
		f.L4T, _ = parseTegraRelease(data)
		f.L4TVersion = f.L4T.String()
	}
	for _, dir := range deviceTreeDirs() {
		if data, ok := root.read(dir + "/model"); ok && f.Model == "" {
			f.Model = strings.Trim(string(data), "\x00 \n")
		}
		if data, ok := root.read(dir + "/compatible"); ok && f.SoC == "" {
			if soc, ok := computecap.SoCFromDeviceTree(data); ok {
				f.setSoC(soc)
			}
		}
	}
	if family, _ := root.read(socFamilyPath); f.SoC == "" && strings.TrimSpace(string(family)) == "Tegra" {
		if data, ok := root.read(socIDPath); ok {
			if id, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				if soc, ok := computecap.SoCByID(id); ok {
					f.setSoC(soc)
				}
			}
		}
	}
	for _, dir := range libcudaDirs() {
		if p := dir + "/libcuda.so.1"; root.exists(p) {
			f.Libcuda = "/" + p
			break
		}
	}
	if row, ok := releaseRow(f.L4T); ok {
		f.JetPack = row.JetPack
		f.DriverCUDA = row.CUDA
		f.DriverCUDAFrom = "L4T " + row.L4T + " table row"
	} else if f.L4T.Major != 0 {
		f.JetPack, _ = computecap.JetPackForL4T(f.L4T.Major)
	}
	return f, nil
}

func (f *Facts) setSoC(soc computecap.SoC) {
	f.SoC, f.Family, f.GPU = soc.Name, soc.Family, soc.Capability
}

// releaseRow is the newest JetPack release of the host's L4T major that is
// not newer than it: 36.4.7 reads as JetPack 6.2.1 (L4T 36.4.4).
func releaseRow(v L4T) (computecap.JetPackRelease, bool) {
	var best computecap.JetPackRelease
	found := false
	for _, r := range computecap.JetPackReleases() {
		rv, ok := ParseL4T(r.L4T)
		if !ok || rv.Major != v.Major || v.less(rv) {
			continue
		}
		best, found = r, true
	}
	return best, found
}

// less reports whether v is an older release than o.
func (v L4T) less(o L4T) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

// parseTegraRelease reads the first line of /etc/nv_tegra_release,
// "# R36 (release), REVISION: 4.3, GCID: ...", into 36.4.3.
func parseTegraRelease(data []byte) (L4T, bool) {
	line, _, _ := strings.Cut(string(data), "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "# R")
	if !ok {
		return L4T{}, false
	}
	major, fields, _ := strings.Cut(rest, " ")
	for field := range strings.SplitSeq(fields, ",") {
		if rev, ok := strings.CutPrefix(strings.TrimSpace(field), "REVISION:"); ok {
			return ParseL4T(major + "." + strings.TrimSpace(rev))
		}
	}
	return L4T{}, false
}

// rootFS reads files under a root folder, at most 64 KiB each.
type rootFS string

func (r rootFS) path(p string) string { return filepath.Join(string(r), filepath.FromSlash(p)) }

func (r rootFS) read(p string) ([]byte, bool) {
	data, err := os.ReadFile(r.path(p))
	if err != nil || len(data) > 64<<10 {
		return nil, false
	}
	return data, true
}

func (r rootFS) exists(p string) bool {
	_, err := os.Stat(r.path(p))
	return err == nil
}
