package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// CheckPlatform and Connect need a running buildkitd: the end-to-end tests
// in builder/internal/e2e cover them.

func TestDefaultStateDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := DefaultStateDir()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(cache, "jetbake", "buildkitd"), dir)

	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", home)
	dir, err = DefaultStateDir()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, ".cache", "jetbake", "buildkitd"), dir)
}

// Without WithStateDir and without a user cache folder a local daemon has
// nowhere to keep its state: a *StateDirError, before anything starts.
func TestDefaultStateDirNoHome(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	_, err := DefaultStateDir()
	var se *StateDirError
	require.ErrorAs(t, err, &se)
	require.Error(t, se.Err)
	require.EqualError(t, err, "find a folder for buildkitd's state: "+se.Err.Error()+" (give one with WithStateDir)")
	t.Setenv("BUILDKIT_HOST", "")
	_, err = Connect(t.Context(), WithBuildkitd("/nonexistent/buildkitd"))
	require.ErrorAs(t, err, &se)
}

func TestFindBuildkitd(t *testing.T) {
	onPath := t.TempDir()
	bin := filepath.Join(onPath, "buildkitd")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))

	tests := []struct {
		name     string
		path     string
		explicit string
		want     string
		wantErr  bool
	}{
		{name: "explicit wins", path: onPath, explicit: "/opt/bin/buildkitd", want: "/opt/bin/buildkitd"},
		{name: "explicit not checked", path: "", explicit: "/does/not/exist", want: "/does/not/exist"},
		{name: "found on PATH", path: onPath, want: bin},
		{name: "nothing found", path: "", wantErr: true},
		{name: "PATH without it", path: t.TempDir(), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			got, err := findBuildkitd(tt.explicit)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrNoBuildkitd)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{name: "empty", content: "", want: ""},
		{name: "one line", content: "started\n", want: "started"},
		{name: "last three", content: "a\nb\nc\nd\ne\n", want: "c | d | e"},
		{name: "trailing blank lines", content: "a\nb\n\n\n", want: "a | b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".log")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
			require.Equal(t, tt.want, tail(path))
		})
	}
	require.Empty(t, tail(filepath.Join(dir, "missing.log")))
}

// The options Connect takes land in its settings.
func TestOptions(t *testing.T) {
	var o options
	for _, opt := range []Option{
		WithAddr("tcp://10.0.0.5:1234"),
		WithTLS(TLS{CACert: "ca.pem", Cert: "cert.pem", Key: "key.pem", ServerName: "orin-1"}),
		WithBuildkitd("/opt/buildkitd"),
		WithStateDir("/state"),
		WithKeepDaemon(true),
	} {
		opt(&o)
	}
	require.Equal(t, "tcp://10.0.0.5:1234", o.addr)
	require.Equal(t, TLS{CACert: "ca.pem", Cert: "cert.pem", Key: "key.pem", ServerName: "orin-1"}, o.tls)
	require.Equal(t, "/opt/buildkitd", o.buildkitd)
	require.Equal(t, "/state", o.stateDir)
	require.True(t, o.keepDaemon)
}
