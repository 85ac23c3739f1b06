package tei

import (
	"bytes"
	"strings"
	"testing"
)

// The stand-in's readers of outside input never panic: a compute_cap.rs,
// a /proc/cpuinfo, an auxiliary vector, a router file's end, a cargo
// command line.
func FuzzParseComputeCapTable(f *testing.F) {
	f.Add("fn compute_cap_matching(a: usize, b: usize) -> bool {\n    match (a, b) {\n        (80..=89, 80) => true, // x\n        (_, _) => false,\n    }\n}\n")
	f.Add("fn compute_cap_matching(\n(9..=1, _) => true\n")
	f.Fuzz(func(t *testing.T, src string) {
		table, err := ParseComputeCapTable(src)
		if err == nil && len(table) == 0 {
			t.Fatal("a table without arms and no error")
		}
		_ = table.Accepts(87, 87)
	})
}

func FuzzFeatures(f *testing.F) {
	f.Add("Features\t: fp asimd\nFeatures: fp\n", []byte{16, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, cpuinfo string, auxv []byte) {
		_, _ = FeaturesFromCPUInfo(cpuinfo)
		_ = FeaturesFromAuxv(auxv)
	})
}

func FuzzParseFacts(f *testing.F) {
	var buf bytes.Buffer
	_ = AppendFacts(&buf, []byte("ELF"), BuildFacts{Package: "p", ComputeCap: 87})
	f.Add(buf.Bytes())
	f.Add([]byte("JBTEI\x00\x01\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseFacts(data)
	})
}

func FuzzParseBuildArgs(f *testing.F) {
	f.Add("--release\x00--bin\x00x\x00-Fa,b\x00--features=c")
	f.Fuzz(func(t *testing.T, joined string) {
		_, _ = ParseBuildArgs(strings.Split(joined, "\x00"))
	})
}

func FuzzParseFlashGate(f *testing.F) {
	f.Add("fn flash_attn_varlen() {\n    } else if (80..90).contains(&runtime_compute_cap)\n        || runtime_compute_cap == 90 // x\n    {\n")
	f.Add("fn flash_attn_varlen() {\n} else if (80..90).contains(&runtime_compute_cap) || runtime_compute_cap == 110 {\n")
	f.Fuzz(func(t *testing.T, src string) {
		gate, err := ParseFlashGate(src)
		if err == nil && len(gate) == 0 {
			t.Fatal("a gate without terms and no error")
		}
		_ = gate.Accepts(110)
	})
}
