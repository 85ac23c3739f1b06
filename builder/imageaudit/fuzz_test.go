package imageaudit_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/imageaudit"
)

// FuzzOpenFile: whatever bytes a file holds, Open takes it as an ELF file
// or a Docker tarball, or refuses it as bad input in one line that starts
// with its path; an ELF file it takes is audited without an error.
func FuzzOpenFile(f *testing.F) {
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	_ = tw.WriteHeader(&tar.Header{Name: "manifest.json", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("[]"))
	_ = tw.Close()
	for _, seed := range [][]byte{nil, []byte("text\n"), tb.Bytes(), elf(fatbintest.Cubin("8.7")), {0x1f, 0x8b, 8}, []byte("PK\x03\x04"), {0x7f, 'E', 'L', 'F'}} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "input")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		im, err := imageaudit.Open(t.Context(), p)
		var ie *imageaudit.InputError
		switch {
		case errors.As(err, &ie):
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, p+" ") {
				t.Fatalf("not one sentence that starts with the path: %q", msg)
			}
		case err != nil:
			t.Fatalf("not bad input: %v", err)
		case im.Source == imageaudit.SourceELF:
			if _, err := imageaudit.Audit(t.Context(), im, cc("8.7")); err != nil {
				t.Fatalf("audit: %v", err)
			}
		}
	})
}
