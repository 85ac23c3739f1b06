package tei

import (
	"bufio"
	"encoding/binary"
	"slices"
	"strings"
)

// hwcapNames are the aarch64 CPU features of AT_HWCAP and AT_HWCAP2, bit by
// bit, as Linux names them in /proc/cpuinfo's "Features" line. Source: the
// kernel's arch/arm64/include/uapi/asm/hwcap.h and the hwcap_str table of
// arch/arm64/kernel/cpuinfo.c.
var hwcapNames = [2][]string{
	{"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "fphp", "asimdhp", "cpuid",
		"asimdrdm", "jscvt", "fcma", "lrcpc", "dcpop", "sha3", "sm3", "sm4", "asimddp", "sha512", "sve", "asimdfhm",
		"dit", "uscat", "ilrcpc", "flagm", "ssbs", "sb", "paca", "pacg"},
	{"dcpodp", "sve2", "sveaes", "svepmull", "svebitperm", "svesha3", "svesm4", "flagm2", "frint", "svei8mm",
		"svef32mm", "svef64mm", "svebf16", "i8mm", "bf16", "dgh", "rng", "bti", "mte", "ecv", "afp", "rpres",
		"mte3", "sme", "smei16i64", "smef64f64", "smei8i32", "smef16f32", "smeb16f32", "smef32f32", "smefa64",
		"wfxt", "ebf16", "sveebf16"},
}

// notInstructions are features of the list that compiled code never
// depends on: the event stream timer and the kernel's emulation of CPU ID
// registers.
var notInstructions = []string{"evtstrm", "cpuid"}

// genericFeatures are what rustc's aarch64-unknown-linux-gnu target
// assumes of every CPU without -C target-cpu: floating point and Advanced
// SIMD (NEON).
var genericFeatures = []string{"asimd", "fp"}

// Auxiliary vector keys (elf.h).
const (
	atNull   = 0
	atHWCAP  = 16
	atHWCAP2 = 26
)

// FeaturesFromAuxv reads the CPU features from a 64-bit auxiliary vector,
// as /proc/self/auxv holds it (QEMU's user-mode emulator writes its
// emulated CPU's there).
func FeaturesFromAuxv(auxv []byte) []string {
	var caps [2]uint64
	for i := 0; i+16 <= len(auxv); i += 16 {
		key, val := binary.LittleEndian.Uint64(auxv[i:]), binary.LittleEndian.Uint64(auxv[i+8:])
		switch key {
		case atNull:
			i = len(auxv)
		case atHWCAP:
			caps[0] = val
		case atHWCAP2:
			caps[1] = val
		}
	}
	return featuresFromHWCAP(caps[0], caps[1])
}

// featuresFromHWCAP names the bits of AT_HWCAP and AT_HWCAP2, sorted.
func featuresFromHWCAP(hwcap, hwcap2 uint64) []string {
	var out []string
	for word, bits := range [2]uint64{hwcap, hwcap2} {
		for bit, name := range hwcapNames[word] {
			if bits&(1<<bit) != 0 {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// FeaturesFromCPUInfo reads the "Features" lines of an aarch64
// /proc/cpuinfo: the features every processor listed has, sorted. ok is
// false when the file has no such line (another architecture's cpuinfo,
// such as the one QEMU's user-mode emulator leaves visible).
func FeaturesFromCPUInfo(cpuinfo string) (features []string, ok bool) {
	var common map[string]bool
	sc := bufio.NewScanner(strings.NewReader(cpuinfo))
	for sc.Scan() {
		key, value, found := strings.Cut(sc.Text(), ":")
		if !found || strings.TrimSpace(key) != "Features" {
			continue
		}
		these := map[string]bool{}
		for _, f := range strings.Fields(value) {
			if common == nil || common[f] {
				these[f] = true
			}
		}
		common = these
	}
	if common == nil {
		return nil, false
	}
	for f := range common {
		features = append(features, f)
	}
	slices.Sort(features)
	return features, true
}

// InstructionFeatures drops the features compiled code cannot depend on.
func InstructionFeatures(features []string) []string {
	out := slices.DeleteFunc(slices.Clone(features), func(f string) bool { return slices.Contains(notInstructions, f) })
	slices.Sort(out)
	return slices.Compact(out)
}

// Missing lists the features of need that have lacks, in need's order.
func Missing(need, have []string) []string {
	var out []string
	for _, f := range need {
		if !slices.Contains(have, f) {
			out = append(out, f)
		}
	}
	return out
}
