package nvreal

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseListing(t *testing.T) {
	l, err := ParseListing([]byte("ELF file    1: libcufft.so.10.9.0.1.sm_35.cubin\nPTX file    1: libcufft.so.10.9.0.1.sm_89.ptx\n" +
		"ELF file    2: libcufft.so.10.9.0.2.sm_90a.cubin\n"))
	require.NoError(t, err)
	require.Equal(t, Listing{{"cubin", "sm_35"}, {"PTX", "sm_89"}, {"cubin", "sm_90a"}}, l)
	require.Equal(t, "sm_35 cubin, sm_89 PTX, sm_90a cubin", l.String())
	require.Equal(t, 2, l.Cubins())
	require.Equal(t, 1, l.PTX())
	l, err = ParseListing(nil)
	require.NoError(t, err)
	require.Nil(t, l)
	_, err = ParseListing([]byte("ELF file    2: a.2.sm_35.cubin\n"))
	require.ErrorContains(t, err, "is not ELF file 1")
	_, err = ParseListing([]byte("Fatbin elf code:\n"))
	require.ErrorContains(t, err, "is neither an ELF file nor a PTX file")
}

func FuzzParseListing(f *testing.F) {
	f.Add([]byte("ELF file    1: a.1.sm_35.cubin\nPTX file    1: a.1.sm_35.ptx\n"))
	f.Add([]byte("ELF file 99999999999999999999: a.99999999999999999999.sm_35.cubin"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseListing(data)
		if err == nil && len(l) > len(data) {
			t.Fatalf("%d entries from %d bytes", len(l), len(data))
		}
	})
}
