package tei

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFactsRoundTrip(t *testing.T) {
	template := []byte("\x7fELF template")
	in := BuildFacts{Package: "text-embeddings-router", Version: "1.9.3", ComputeCap: 87, Linking: LinkStatic,
		Table: Table{{Runtime: Range{Lo: 87, Hi: 87}, Compile: Range{Lo: 87, Hi: 87}, Result: true}}, CPUFeatures: []string{"asimd", "fp"}}
	var buf bytes.Buffer
	require.NoError(t, AppendFacts(&buf, template, in))
	require.True(t, bytes.HasPrefix(buf.Bytes(), template), "the template's bytes come first, unchanged")
	got, err := ParseFacts(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, in, got)

	path := filepath.Join(t.TempDir(), "router")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o755))
	got, err = ReadFacts(path)
	require.NoError(t, err)
	require.Equal(t, in, got)

	_, err = ParseFacts(template)
	require.ErrorIs(t, err, ErrNoFacts, "a template has none")
	_, err = ParseFacts(nil)
	require.ErrorIs(t, err, ErrNoFacts)
	bad := append([]byte{}, template...)
	bad = binary.LittleEndian.AppendUint64(bad, 1<<40)
	bad = append(bad, factsMagic...)
	_, err = ParseFacts(bad)
	require.ErrorContains(t, err, "does not fit the file")
}

func TestFeaturesFromAuxv(t *testing.T) {
	// QEMU 7.2's emulated aarch64 CPU ("max") as its user-mode emulator reports it.
	var auxv []byte
	for _, kv := range [][2]uint64{{6, 4096}, {atHWCAP, 0xecfffffb}, {atHWCAP2, 0x7f877fff}, {atNull, 0}, {atHWCAP, 0}} {
		auxv = binary.LittleEndian.AppendUint64(auxv, kv[0])
		auxv = binary.LittleEndian.AppendUint64(auxv, kv[1])
	}
	got := FeaturesFromAuxv(auxv)
	require.Contains(t, got, "sve")
	require.Contains(t, got, "sve2")
	require.Contains(t, got, "i8mm")
	require.NotContains(t, got, "evtstrm", "bit 2 is clear")
	require.Empty(t, FeaturesFromAuxv(nil))
}

const orinCPUInfo = "processor\t: 0\nBogoMIPS\t: 62.50\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp uscat ilrcpc flagm paca pacg\nCPU implementer\t: 0x41\n\n" +
	"processor\t: 1\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp uscat ilrcpc flagm paca pacg\n"

func TestFeaturesFromCPUInfo(t *testing.T) {
	got, ok := FeaturesFromCPUInfo(orinCPUInfo)
	require.True(t, ok)
	require.Contains(t, got, "asimddp")
	require.NotContains(t, got, "sve")
	_, ok = FeaturesFromCPUInfo("processor\t: 0\nflags\t\t: fpu vme de pse\n")
	require.False(t, ok, "an x86 cpuinfo has no Features line")
	mixed, ok := FeaturesFromCPUInfo("Features\t: fp asimd sve\nFeatures\t: fp asimd\n")
	require.True(t, ok)
	require.Equal(t, []string{"asimd", "fp"}, mixed, "what every core has")
	require.Equal(t, []string{"sve", "sve2"}, Missing([]string{"fp", "sve", "sve2"}, got))
	require.Equal(t, []string{"asimd", "fp"}, InstructionFeatures([]string{"fp", "evtstrm", "asimd", "cpuid", "fp"}))
}

func TestParseComputeCapTable(t *testing.T) {
	src, err := os.ReadFile("../../../../testdata/tei-source/backends/candle/src/compute_cap.rs")
	require.NoError(t, err)
	table, err := ParseComputeCapTable(string(src))
	require.NoError(t, err)
	require.True(t, table.Accepts(89, 80))
	require.True(t, table.Accepts(86, 86))
	require.False(t, table.Accepts(80, 86))
	require.False(t, table.Accepts(87, 87), "upstream's table has no Orin arm (TEI #466)")
	require.False(t, table.Accepts(110, 110))

	patched, err := ParseComputeCapTable(string(src) + "")
	require.NoError(t, err)
	require.Equal(t, table, patched)

	tests := []struct {
		name, src, err string
	}{
		{name: "no function", src: "fn other() {}", err: "no fn compute_cap_matching(...)"},
		{name: "no arms", src: "fn compute_cap_matching(a: usize, b: usize) -> bool {\n    match (a, b) {\n    }\n}\n", err: "has no arms"},
		{name: "bad pattern", src: "fn compute_cap_matching(a: usize, b: usize) -> bool {\n    match (a, b) {\n        (8x, 80) => true,\n    }\n}\n", err: `"8x" is not a number`},
		{name: "bad value", src: "fn compute_cap_matching(a: usize, b: usize) -> bool {\n    match (a, b) {\n        (80, 80) => maybe,\n    }\n}\n", err: "not true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseComputeCapTable(tt.src)
			require.ErrorContains(t, err, tt.err)
		})
	}
	first := Table{{Runtime: Range{Any: true}, Compile: Range{Any: true}, Result: false}, {Runtime: Range{Lo: 87, Hi: 87}, Compile: Range{Lo: 87, Hi: 87}, Result: true}}
	require.False(t, first.Accepts(87, 87), "the first matching arm decides")
}

// The arm jetson-compute-cap.sh adds carries a comment, which Rust ignores.
func TestParseComputeCapTableComments(t *testing.T) {
	table, err := ParseComputeCapTable("fn compute_cap_matching(a: usize, b: usize) -> bool {\n    match (a, b) {\n" +
		"        (87, 87) => true, // Jetson, added by jetson-compute-cap.sh\n        (_, _) => false,\n    }\n}\n")
	require.NoError(t, err)
	require.True(t, table.Accepts(87, 87))
}
