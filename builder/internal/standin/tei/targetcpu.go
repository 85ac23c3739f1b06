package tei

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// rustcFeatures maps rustc's aarch64 target features to the Linux CPU
// features (as /proc/cpuinfo names them) that code compiled with them
// needs. Sources: rustc's list (`rustc --print target-features --target
// aarch64-unknown-linux-gnu`), LLVM's AArch64Features.td and the kernel's
// hwcap names.
var rustcFeatures = map[string][]string{
	"neon": {"asimd"}, "fp16": {"fphp", "asimdhp"}, "fhm": {"asimdfhm"}, "aes": {"aes", "pmull"},
	"sha2": {"sha1", "sha2"}, "sha3": {"sha3", "sha512"}, "sm4": {"sm3", "sm4"}, "crc": {"crc32"},
	"lse": {"atomics"}, "lse2": {"uscat"}, "rdm": {"asimdrdm"}, "rcpc": {"lrcpc"}, "rcpc2": {"ilrcpc"},
	"dotprod": {"asimddp"}, "jsconv": {"jscvt"}, "fcma": {"fcma"}, "dpb": {"dcpop"}, "dpb2": {"dcpodp"},
	"dit": {"dit"}, "flagm": {"flagm"}, "ssbs": {"ssbs"}, "sb": {"sb"}, "paca": {"paca"}, "pacg": {"pacg"},
	"frintts": {"frint"}, "i8mm": {"i8mm"}, "bf16": {"bf16"}, "rand": {"rng"}, "bti": {"bti"}, "mte": {"mte"},
	"sve": {"sve"}, "sve2": {"sve2"}, "sve2-aes": {"sveaes"}, "sve2-sha3": {"svesha3"},
	"sve2-sm4": {"svesm4"}, "sve2-bitperm": {"svebitperm"}, "f32mm": {"svef32mm"}, "f64mm": {"svef64mm"},
	"sme": {"sme"}, "wfxt": {"wfxt"},
}

// rustcImplies are the rustc features that turn on others (sve2 needs sve):
// "+sve2" adds both, "-sve2" takes only sve2 away.
var rustcImplies = map[string][]string{
	"sve2": {"sve"}, "sve2-aes": {"sve", "sve2"}, "sve2-sha3": {"sve", "sve2"}, "sve2-sm4": {"sve", "sve2"},
	"sve2-bitperm": {"sve", "sve2"}, "f32mm": {"sve"}, "f64mm": {"sve"},
}

// CPUTarget is what the code of a build may use.
type CPUTarget struct {
	// CPU is -C target-cpu, "generic" when not given.
	CPU string
	// Features are the CPU features the code needs, sorted.
	Features []string
	// Warnings are what rustc would print about the flags.
	Warnings []string
}

// TargetCPU works out, from the rustflags, which CPU features the compiled
// code may use: "native" is the building machine's (host), a CPU of the
// table of Jetson facts is its features, anything else rustc does not know
// is ignored with rustc's warning; then -C target-feature adds (+) or
// removes (-) features.
func TargetCPU(flags []string, host []string) CPUTarget {
	t := CPUTarget{CPU: "generic", Features: slices.Clone(genericFeatures)}
	if cpus := Codegen(flags, "target-cpu"); len(cpus) > 0 {
		t.CPU = cpus[len(cpus)-1]
	}
	switch t.CPU {
	case "generic":
	case "native":
		t.Features = InstructionFeatures(host)
	default:
		if features, ok := jetsonCPU(t.CPU); ok {
			t.Features = features
		} else {
			t.Warnings = append(t.Warnings, fmt.Sprintf("'%s' is not a recognized processor for this target (ignoring processor)", t.CPU))
		}
	}
	for _, list := range Codegen(flags, "target-feature") {
		for _, f := range strings.Split(list, ",") {
			t.applyFeature(strings.TrimSpace(f))
		}
	}
	slices.Sort(t.Features)
	t.Features = slices.Compact(t.Features)
	return t
}

// applyFeature applies one "+sve" or "-sve" of -C target-feature.
func (t *CPUTarget) applyFeature(f string) {
	if f == "" {
		return
	}
	name := strings.TrimLeft(f, "+-")
	linux, ok := rustcFeatures[name]
	if !ok {
		t.Warnings = append(t.Warnings, fmt.Sprintf("unknown and unstable feature specified for `-Ctarget-feature`: `%s`", name))
		return
	}
	if strings.HasPrefix(f, "-") {
		t.Features = slices.DeleteFunc(t.Features, func(x string) bool { return slices.Contains(linux, x) })
		return
	}
	t.Features = append(t.Features, linux...)
	for _, implied := range rustcImplies[name] {
		t.Features = append(t.Features, rustcFeatures[implied]...)
	}
}

// jetsonCPU returns the features of a Jetson CPU by its -C target-cpu
// name (the table's CPU name, lower case), when the table knows them.
func jetsonCPU(name string) ([]string, bool) {
	for _, soc := range computecap.DefaultTable().SoCs {
		if soc.CPU.Name != "" && strings.EqualFold(soc.CPU.Name, name) && len(soc.CPU.Features) > 0 {
			return InstructionFeatures(soc.CPU.Features), true
		}
	}
	return nil, false
}
