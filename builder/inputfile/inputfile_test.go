package inputfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	unreadable := write("unreadable.json", []byte("{}"))
	require.NoError(t, os.Chmod(unreadable, 0))
	tests := []struct {
		name    string
		path    string
		want    string
		noRoot  bool // root reads any file
		wantErr string
	}{
		{name: "good", path: write("good.json", []byte(`{"a": "é"}`)), want: `{"a": "é"}`},
		{name: "at the limit", path: write("limit.json", []byte(strings.Repeat(" ", 64))), want: strings.Repeat(" ", 64)},
		{name: "missing", path: filepath.Join(dir, "none.json"), wantErr: "matrix file " + filepath.Join(dir, "none.json") + " does not exist: run 'jetbake init'"},
		{name: "folder", path: dir, wantErr: "is a folder: name the file itself"},
		{name: "over the limit", path: write("big.json", []byte(strings.Repeat(" ", 65))), wantErr: "is over the limit of 64 bytes (64 bytes)"},
		{name: "BOM", path: write("bom.json", append([]byte{0xEF, 0xBB, 0xBF}, "{}"...)), wantErr: "starts with a UTF-8 byte order mark (bytes EF BB BF): save it as UTF-8 without a BOM"},
		{name: "invalid UTF-8", path: write("latin1.json", []byte("{\"a\": \"caf\xe9\"}")), wantErr: "is not valid UTF-8 at byte offset 10 (byte 0xE9): save it as UTF-8"},
		{name: "unreadable", path: unreadable, noRoot: true, wantErr: "cannot be read (permission denied)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.noRoot && os.Geteuid() == 0 {
				data, err := Read(tt.path, "matrix file", WithLimit(64))
				require.NoError(t, err, "root reads a mode-0 file")
				require.Equal(t, "{}", string(data))
				return
			}
			data, err := Read(tt.path, "matrix file", WithLimit(64), WithMissingHint("run 'jetbake init' to write one"))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				var ie *Error
				require.True(t, errors.As(err, &ie))
				require.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, string(data))
		})
	}
}

func TestDefaultLimitNamed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.json")
	require.NoError(t, os.WriteFile(p, make([]byte, DefaultLimit+1), 0o644))
	_, err := Read(p, "matrix file")
	require.ErrorContains(t, err, "is over the limit of 1 MiB (1048576 bytes)")
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte("{}"))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add([]byte("caf\xe9"))
	f.Fuzz(func(t *testing.T, data []byte) {
		problem := Check(data)
		if problem == "" && (!utf8.Valid(data) || strings.HasPrefix(string(data), "\xef\xbb\xbf")) {
			t.Fatalf("Check accepted %q", data)
		}
	})
}

// TestReadRefusesWhatIsNotAFile puts a named pipe, a device and a socket
// where a file is expected. Opening a FIFO blocks until a writer comes, in
// the kernel, where SIGINT and SIGTERM do not end it: Read must refuse each
// at once, naming what it is.
func TestReadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "matrix.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	tests := map[string]struct{ path, want string }{
		"named pipe": {fifo, "matrix file " + fifo + " is a named pipe (FIFO), not a regular file: name a file; jetbake reads no pipe, device or socket"},
		"device":     {"/dev/zero", "matrix file /dev/zero is a device, not a regular file"},
		"socket":     {sock, "matrix file " + sock + " is a socket, not a regular file"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := Read(tt.path, "matrix file"); done <- err }()
			select {
			case err := <-done:
				require.ErrorContains(t, err, tt.want)
				var ie *Error
				require.ErrorAs(t, err, &ie)
			case <-time.After(10 * time.Second):
				t.Fatalf("Read(%s) blocks", tt.path)
			}
		})
	}
}

func TestWriteFileNamesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	err := WriteFile(filepath.Join(dir, "nodir", "sub", "matrix.json"), []byte("{}"), 0o644)
	require.EqualError(t, err, "cannot write "+filepath.Join(dir, "nodir", "sub", "matrix.json")+
		": the folder "+filepath.Join(dir, "nodir", "sub")+" does not exist: create it first, or name another file")
	p := filepath.Join(dir, "m.json")
	require.NoError(t, WriteFile(p, []byte("{}"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "folder"), 0o755))
	err = WriteFile(filepath.Join(dir, "folder"), []byte("{}"), 0o644)
	require.Error(t, err)
	require.NotContains(t, err.Error(), ".folder", "the temporary file's name")
}
