//go:build unix

package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRegular checks each kind of file ReadRegular meets, a named pipe
// without a writer among them: os.ReadFile would block on it for ever.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("R36 (release), REVISION: 4.3"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string
		wantErr    string
	}{
		{name: "file", path: file, limit: 64, want: "R36 (release), REVISION: 4.3"},
		{name: "over the limit", path: file, limit: 8, wantErr: file + " is over the limit of 8 bytes"},
		{name: "named pipe", path: fifo, limit: 64, wantErr: fifo + " is a named pipe (FIFO), not a regular file"},
		{name: "folder", path: dir, limit: 64, wantErr: dir + " is a folder, not a regular file"},
		{name: "device", path: "/dev/null", limit: 64, wantErr: "/dev/null is a device, not a regular file"},
		{name: "missing", path: filepath.Join(dir, "none"), limit: 64, wantErr: "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type answer struct {
				data []byte
				err  error
			}
			done := make(chan answer, 1)
			go func() { d, err := ReadRegular(tt.path, tt.limit); done <- answer{d, err} }()
			var a answer
			select {
			case a = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("ReadRegular(%s) blocks", tt.path)
			}
			if tt.wantErr == "" {
				if a.err != nil || string(a.data) != tt.want {
					t.Fatalf("got %q, %v", a.data, a.err)
				}
				return
			}
			if a.err == nil || !strings.Contains(a.err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", a.err, tt.wantErr)
			}
		})
	}
	if _, err := ReadRegular(file, 8); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%v is not ErrTooLarge", err)
	}
}
