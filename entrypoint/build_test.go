package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportsStayStandard guards the entrypoint's promise: the standard
// library, computecap, imagespec and detect, nothing else.
func TestImportsStayStandard(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	require.ElementsMatch(t, []string{
		"github.com/jetbake/jetbake/computecap",
		"github.com/jetbake/jetbake/computecap/host",
		"github.com/jetbake/jetbake/entrypoint/imagespec",
		"github.com/jetbake/jetbake/entrypoint/detect",
		"github.com/jetbake/jetbake/entrypoint",
	}, strings.Fields(string(out)))
}

// TestReleaseBinarySize builds the entrypoint as released for Jetson
// (static, stripped, linux/arm64) and checks it stays within 3 MB.
func TestReleaseBinarySize(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "jetbake-entrypoint")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	fi, err := os.Stat(bin)
	require.NoError(t, err)
	require.LessOrEqual(t, fi.Size(), int64(3<<20), "stripped linux/arm64 entrypoint is %d bytes", fi.Size())
}
