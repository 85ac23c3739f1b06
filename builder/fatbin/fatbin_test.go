package fatbin_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/computecap"
)

func names(entries []fatbin.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.String()
	}
	return out
}

// TestReadELF reads the shapes of the issue: bitsandbytes' wheels (cubins
// for sm_75, sm_80 and sm_90, PTX for the newest), an SBSA torch (sm_110
// and sm_121), several fat binaries back to back, relocatable device
// code, compressed entries and CUDA 12.8's longer entry headers.
func TestReadELF(t *testing.T) {
	c, p := fatbintest.Cubin, fatbintest.PTX
	long := fatbintest.Cubin("11.0")
	long.HeaderSize, long.Compressed = 112, true
	for name, tc := range map[string]struct {
		sections []fatbintest.Section
		want     []string
	}{
		"no GPU code": {sections: []fatbintest.Section{fatbintest.Filler(100)}},
		"bitsandbytes": {sections: fatbintest.NVCC(c("7.5"), c("8.0"), c("9.0"), p("9.0")),
			want: []string{"sm_75 cubin", "sm_80 cubin", "sm_90 cubin", "compute_90 PTX"}},
		"torch from an SBSA index": {sections: fatbintest.NVCC(c("11.0"), c("12.1")),
			want: []string{"sm_110 cubin", "sm_121 cubin"}},
		"back to back": {sections: []fatbintest.Section{fatbintest.Fatbins(".nv_fatbin", []fatbintest.Code{c("8.7")}, []fatbintest.Code{p("8.7"), long})},
			want: []string{"sm_87 cubin", "compute_87 PTX", "sm_110 cubin"}},
		"relocatable": {sections: []fatbintest.Section{fatbintest.Filler(10), fatbintest.Fatbins("__nv_relfatbin", []fatbintest.Code{c("7.2")})},
			want: []string{"sm_72 cubin"}},
	} {
		t.Run(name, func(t *testing.T) {
			entries, err := fatbin.ReadELF(bytes.NewReader(fatbintest.ELF(tc.sections...)), fatbin.Limits{})
			require.NoError(t, err)
			if tc.want == nil {
				require.Empty(t, entries)
				return
			}
			require.Equal(t, tc.want, names(entries))
		})
	}
	entries, err := fatbin.ReadELF(bytes.NewReader(fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", []fatbintest.Code{long}))), fatbin.Limits{})
	require.NoError(t, err)
	require.True(t, entries[0].Compressed)
	require.Equal(t, computecap.MustParse("11.0"), entries[0].SM)
	require.Equal(t, int64(1000), entries[0].Size)
}

func TestReadELFNotELF(t *testing.T) {
	_, err := fatbin.ReadELF(bytes.NewReader([]byte("#!/bin/sh\n")), fatbin.Limits{})
	require.ErrorIs(t, err, fatbin.ErrNotELF)
	_, err = fatbin.ReadELF(bytes.NewReader([]byte("\x7fELF\x02\x01")), fatbin.Limits{})
	require.ErrorContains(t, err, "it is not a valid ELF file")
}

// TestParseLies: a section that lies about a size gets one sentence that
// says where and what.
func TestParseLies(t *testing.T) {
	good := fatbintest.Fatbin(fatbintest.Cubin("8.7"), fatbintest.PTX("8.7"))
	le := binary.LittleEndian
	edit := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"fat binary too long": {edit(func(b []byte) { le.PutUint64(b[8:], 1<<40) }),
			"at offset 0, the fat binary says its entries take 1099511627776 bytes, but the section has 2632 left"},
		"fat binary size wraps": {edit(func(b []byte) { le.PutUint64(b[8:], ^uint64(0)) }), "the fat binary says its entries take 18446744073709551615 bytes"},
		"entry too long": {edit(func(b []byte) { le.PutUint64(b[16+8:], 1<<62) }),
			"at offset 16, an entry says its code takes 4611686018427387904 bytes, but the fat binary has 2568 left"},
		"entry header too short": {edit(func(b []byte) { le.PutUint32(b[16+4:], 8) }), "an entry's header says it is 8 bytes, outside 64 to 4096"},
		"bad magic":              {edit(func(b []byte) { b[0] = 1 }), "at offset 0, the magic number is 0xba55ed01, not 0xba55ed50"},
		"bad version":            {edit(func(b []byte) { b[4] = 2 }), "the fat binary's version is 2"},
		"no SM":                  {edit(func(b []byte) { le.PutUint32(b[16+28:], 3) }), "an entry's arch field is 3, which names no SM"},
		"cut":                    {good[:40], "the fat binary says its entries take 2632 bytes, but the section has 24 left"},
		"header cut":             {good[:10], "10 bytes remain, too few for a fat binary's 16-byte header"},
		"zeros then garbage":     {append(make([]byte, 512), 1), "more than 256 zero bytes stand where a fat binary should start"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := fatbin.Parse(bytes.NewReader(tc.data), int64(len(tc.data)), ".nv_fatbin", fatbin.Limits{})
			var ferr *fatbin.FormatError
			require.True(t, errors.As(err, &ferr), "%v", err)
			require.ErrorContains(t, err, "its .nv_fatbin section is not a valid CUDA fat binary: ")
			require.ErrorContains(t, err, tc.want)
		})
	}
	// A section longer than the file.
	_, err := fatbin.Parse(bytes.NewReader(good), int64(len(good))+64, ".nv_fatbin", fatbin.Limits{})
	require.ErrorContains(t, err, "the section ends before the 8 bytes it should hold there")
	// Padding after the last fat binary is allowed.
	entries, err := fatbin.Parse(bytes.NewReader(append(bytes.Clone(good), make([]byte, 16)...)), int64(len(good))+16, ".nv_fatbin", fatbin.Limits{})
	require.NoError(t, err)
	require.Len(t, entries, 2)
	// The entry limit.
	_, err = fatbin.Parse(bytes.NewReader(good), int64(len(good)), ".nv_fatbin", fatbin.Limits{MaxEntries: 1})
	require.ErrorContains(t, err, "the section holds more than 1 entries")
}

// TestModules groups the entries of back-to-back fat binaries, one group
// per fat binary and section, as the driver loads them.
func TestModules(t *testing.T) {
	c, p := fatbintest.Cubin, fatbintest.PTX
	elf := fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", []fatbintest.Code{c("8.7"), c("11.0")}, []fatbintest.Code{c("8.0"), p("8.0")}),
		fatbintest.Fatbins("__nv_relfatbin", []fatbintest.Code{c("7.2")}))
	entries, err := fatbin.ReadELF(bytes.NewReader(elf), fatbin.Limits{})
	require.NoError(t, err)
	var got [][]string
	for _, m := range fatbin.Modules(entries) {
		got = append(got, names(m))
	}
	require.Equal(t, [][]string{{"sm_87 cubin", "sm_110 cubin"}, {"sm_80 cubin", "compute_80 PTX"}, {"sm_72 cubin"}}, got)
	require.Equal(t, int64(0), entries[0].Fatbin)
	require.Equal(t, fatbintest.FatbinSize(c("8.7"), c("11.0")), entries[2].Fatbin)
	require.Empty(t, fatbin.Modules(nil))
}
