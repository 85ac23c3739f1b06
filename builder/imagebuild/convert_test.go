package imagebuild

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A "# syntax=" line asks for another frontend: jetbake leaves it to the
// dockerfile.v0 frontend, which runs it.
func TestConvertRoutersFallsBackToTheFrontend(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("# syntax=docker/dockerfile:1\nFROM scratch AS router\n"), 0o644))
	tests := []struct {
		name string
		job  *releaseJob
	}{
		{"local context", &releaseJob{opts: &options{}, contextDir: dir, dockerfileDir: dir, dockerfile: "Dockerfile"}},
		{"git context", &releaseJob{opts: &options{}, gitContext: "https://example.com/r.git#v1", dockerfileDir: dir, dockerfile: "Dockerfile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			states, ok, err := tt.job.convertRouters(t.Context(), nil, "base")
			require.NoError(t, err)
			require.False(t, ok, "the frontend must convert it")
			require.Nil(t, states)
		})
	}
	missing := releaseJob{opts: &options{}, contextDir: dir, dockerfileDir: dir, dockerfile: "Nope"}
	_, _, err := missing.convertRouters(t.Context(), nil, "base")
	require.ErrorContains(t, err, "the router's Dockerfile "+filepath.Join(dir, "Nope")+" does not exist")
	// A pipe in its place is refused at once: reading it would block the build.
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "Pipe"), 0o644))
	piped := releaseJob{opts: &options{}, contextDir: dir, dockerfileDir: dir, dockerfile: "Pipe"}
	_, _, err = piped.convertRouters(t.Context(), nil, "base")
	require.ErrorContains(t, err, "is a named pipe (FIFO), not a regular file")
}
