package computecap

import (
	"strconv"
	"strings"
)

// JetPackForL4T maps an L4T (Jetson Linux) major release, as found in
// /etc/nv_tegra_release ("# R36 ..."), to the JetPack series it belongs to:
//
//	35 -> "5.1"     (L4T 35.2.1 .. 35.6.4)
//	36 -> "6"       (JetPack 6.0 .. 6.2.x)
//	38 -> "7.0/7.1" (L4T 38.2 is 7.0, 38.4 is 7.1)
//	39 -> "7.2"
//
// The string is meant for messages; it is not a tag. Other majors return
// false. For the exact JetPack of a full L4T version see
// JetPackForL4TRelease.
func JetPackForL4T(l4tMajor int) (string, bool) {
	switch l4tMajor {
	case 35:
		return "5.1", true
	case 36:
		return "6", true
	case 38:
		return "7.0/7.1", true
	case 39:
		return "7.2", true
	default:
		return "", false
	}
}

// JetPackRelease is one row of the JetPack table in jetson-facts.md.
type JetPackRelease struct {
	// JetPack is the JetPack version, such as "6.2".
	JetPack string
	// L4T is the Jetson Linux version, such as "36.4.3".
	L4T string
	// CUDA is the CUDA release shipped with it.
	CUDA CUDAVersion
	// Ubuntu is the Ubuntu release of its root filesystem, such as "22.04".
	Ubuntu string
	// Capabilities are the SMs of the modules it supports.
	Capabilities []Capability
}

// JetPackReleases returns the JetPack releases jetbake knows, oldest first.
// JetPack 5.1 stands for 5.1 .. 5.1.6 (L4T 35.2.1 .. 35.6.4). Each call
// returns a fresh slice.
func JetPackReleases() []JetPackRelease {
	xavier := Capability{Major: 7, Minor: 2}
	orin := Capability{Major: 8, Minor: 7}
	thor := Capability{Major: 11, Minor: 0}
	cuda := func(major, minor int) CUDAVersion { return CUDAVersion{Major: major, Minor: minor} }
	return []JetPackRelease{
		{JetPack: "5.1", L4T: "35.2.1", CUDA: cuda(11, 4), Ubuntu: "20.04", Capabilities: []Capability{xavier, orin}},
		{JetPack: "6.0", L4T: "36.3.0", CUDA: cuda(12, 2), Ubuntu: "22.04", Capabilities: []Capability{orin}},
		{JetPack: "6.1", L4T: "36.4.0", CUDA: cuda(12, 6), Ubuntu: "22.04", Capabilities: []Capability{orin}},
		{JetPack: "6.2", L4T: "36.4.3", CUDA: cuda(12, 6), Ubuntu: "22.04", Capabilities: []Capability{orin}},
		{JetPack: "6.2.1", L4T: "36.4.4", CUDA: cuda(12, 6), Ubuntu: "22.04", Capabilities: []Capability{orin}},
		{JetPack: "7.0", L4T: "38.2.0", CUDA: cuda(13, 0), Ubuntu: "24.04", Capabilities: []Capability{thor}},
		{JetPack: "7.1", L4T: "38.4.0", CUDA: cuda(13, 0), Ubuntu: "24.04", Capabilities: []Capability{thor}},
		{JetPack: "7.2", L4T: "39.2.0", CUDA: cuda(13, 2), Ubuntu: "24.04", Capabilities: []Capability{orin, thor}},
	}
}

// JetPackForL4TRelease finds the JetPack release whose L4T version is
// exactly l4t, such as "36.4.3" (JetPack 6.2). Versions not in the table
// return false; use JetPackForL4T with the major for a series.
func JetPackForL4TRelease(l4t string) (JetPackRelease, bool) {
	l4t = strings.TrimSpace(l4t)
	for _, r := range JetPackReleases() {
		if r.L4T == l4t {
			return r, true
		}
	}
	return JetPackRelease{}, false
}

// L4TMajorForJetPack maps a JetPack version to its L4T major: "5", "5.0.x"
// and "5.1.x" give 35; "6", "6.0" .. "6.2.x" give 36; "7.0.x" and "7.1.x"
// give 38; "7.2.x" gives 39. A bare "7" is ambiguous (38 or 39) and returns
// false, as do unknown releases (such as "6.3") and malformed text. Spaces
// around the text are ignored.
func L4TMajorForJetPack(jetpack string) (int, bool) {
	parts := strings.Split(strings.TrimSpace(jetpack), ".")
	if len(parts) > 3 {
		return 0, false
	}
	nums := make([]int, 0, 3)
	for _, p := range parts {
		if len(p) == 0 || len(p) > 3 || !allDigits(p) {
			return 0, false
		}
		n, _ := strconv.Atoi(p)
		nums = append(nums, n)
	}
	minor := -1
	if len(nums) > 1 {
		minor = nums[1]
	}
	switch {
	case nums[0] == 5 && minor <= 1:
		return 35, true
	case nums[0] == 6 && minor <= 2:
		return 36, true
	case nums[0] == 7 && (minor == 0 || minor == 1):
		return 38, true
	case nums[0] == 7 && minor == 2:
		return 39, true
	}
	return 0, false
}
