package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteReplacesWholeAndLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "build.json")
	require.NoError(t, Write(path, []byte("old")))
	require.NoError(t, Write(path, []byte("new")))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new", string(data))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left")
}

func TestWriteFailsInAMissingFolder(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "missing", "x.json"), []byte("x"))
	require.ErrorContains(t, err, "write ")
}
