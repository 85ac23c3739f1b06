package fatbin_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
)

// FuzzReadELF: any input gives entries or an error, never a panic; every
// entry lies inside its section, and a fat binary error is a FormatError.
func FuzzReadELF(f *testing.F) {
	f.Add(fatbintest.ELF(fatbintest.NVCC(fatbintest.Cubin("8.7"), fatbintest.PTX("8.7"))...))
	f.Add(fatbintest.ELF(fatbintest.Fatbins("__nv_relfatbin", []fatbintest.Code{fatbintest.Cubin("11.0")}, []fatbintest.Code{fatbintest.PTX("7.2")})))
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := fatbin.ReadELF(bytes.NewReader(data), fatbin.Limits{MaxEntries: 1000})
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Offset < 0 || e.Size < 0 || e.Offset+e.Size > int64(len(data)) || !e.SM.Valid() {
				t.Fatalf("entry %+v outside a %d-byte file", e, len(data))
			}
		}
	})
}

// FuzzParse: the fat binary parser on a section alone.
func FuzzParse(f *testing.F) {
	f.Add(fatbintest.Fatbin(fatbintest.Cubin("8.7"), fatbintest.PTX("9.0")))
	f.Add(append(fatbintest.Fatbin(fatbintest.Cubin("7.5")), fatbintest.Fatbin(fatbintest.PTX("12.1"))...))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := fatbin.Parse(bytes.NewReader(data), int64(len(data)), ".nv_fatbin", fatbin.Limits{MaxEntries: 1000})
		var ferr *fatbin.FormatError
		if err != nil && !errors.As(err, &ferr) {
			t.Fatalf("not a FormatError: %v", err)
		}
		for _, e := range entries {
			if e.Offset+fatbin.EntryHeaderSize+e.Size > int64(len(data)) {
				t.Fatalf("entry %+v outside a %d-byte section", e, len(data))
			}
		}
	})
}
