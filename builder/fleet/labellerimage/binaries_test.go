package labellerimage

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/version"
)

// other is the architecture of the image this machine does not run.
func other() string {
	if runtime.GOARCH == "arm64" {
		return "amd64"
	}
	return "arm64"
}

func TestFindTakesTheRunningJetbakeAndDistForTheOther(t *testing.T) {
	dir := t.TempDir()
	_, err := Find(dir, "/usr/local/bin/jetbake")
	var missing *MissingError
	require.ErrorAs(t, err, &missing)
	require.Equal(t, filepath.Join(dir, FileName(other())), missing.Path)
	require.Equal(t, filepath.Join(dir, "jetbake-linux-"+other())+" does not exist: the labeller image needs jetbake for linux/"+other(), err.Error())

	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName(other())), []byte("x"), 0o755))
	bins, err := Find(dir, "/usr/local/bin/jetbake")
	require.NoError(t, err)
	want := map[string]string{runtime.GOARCH: "/usr/local/bin/jetbake", other(): filepath.Join(dir, FileName(other()))}
	require.Len(t, bins, 2)
	for i, b := range bins {
		require.Equal(t, Arches()[i], b.Arch, "the index's order")
		require.Equal(t, want[b.Arch], b.Path)
	}

	_, err = Find(dir, "") // both from the folder
	require.ErrorAs(t, err, &missing)
	require.Equal(t, runtime.GOARCH, missing.Arch)
}

// A binary that a FROM scratch image cannot run is refused before
// anything is built, with the reason.
func TestCheckRefusesWhatAScratchImageCannotRun(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "jetbake-linux-amd64")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho jetbake\n"), 0o755))
	_, err := Check([]Binary{{Arch: "amd64", Path: script}})
	var be *BinaryError
	require.ErrorAs(t, err, &be)
	require.Contains(t, err.Error(), script+" cannot be the labeller image's jetbake for linux/amd64: it is not an ELF executable")

	// Debian's ls: dynamic, for this machine.
	ls, err := filepath.EvalSymlinks("/bin/ls")
	require.NoError(t, err)
	_, err = Check([]Binary{{Arch: runtime.GOARCH, Path: ls}})
	require.ErrorAs(t, err, &be)
	require.Contains(t, err.Error(), "it is linked dynamically (its loader is /lib")
	require.Contains(t, err.Error(), "build it with CGO_ENABLED=0, as 'make release' does")

	_, err = Check([]Binary{{Arch: other(), Path: ls}})
	require.ErrorAs(t, err, &be)
	require.Contains(t, err.Error(), "it is a binary for "+machineName(machine(runtime.GOARCH), 2)+", not "+machineName(machine(other()), 2))

	_, err = Check([]Binary{{Arch: "riscv64", Path: ls}})
	require.ErrorContains(t, err, "made for amd64 and arm64 only")
}

func TestDefaultRef(t *testing.T) {
	for v, want := range map[string]string{
		"v0.3.0":                               Repository + ":v0.3.0",
		"v0.2.0-rc.1":                          Repository + ":v0.2.0-rc.1",
		"v0.3.0-5-gabc1234":                    "",
		"v0.0.0-20261130150000-abcdef123456":   "",
		"v0.3.1-0.20261130150000-abcdef123456": "",
		"0f62628-dirty":                        "",
		"(devel)":                              "",
	} {
		got, err := DefaultRef(version.Info{Version: v})
		require.Equal(t, want, got, v)
		if want == "" {
			var nr *NotReleaseError
			require.ErrorAs(t, err, &nr, v)
			require.Equal(t, "jetbake "+v+" is not a release, so "+Repository+" has no image for it", err.Error())
		}
	}
	_, err := DefaultRef(version.Info{Version: "v0.3.0", Commit: "abc", Modified: true})
	require.ErrorContains(t, err, "jetbake v0.3.0 (commit abc, modified) is not a release")
}

func TestCheckRef(t *testing.T) {
	require.NoError(t, CheckRef("127.0.0.1:5000/jetbake-labeller:v0.3.0"))
	err := CheckRef("ghcr.io/Acme/labeller:v1")
	var re *RefError
	require.ErrorAs(t, err, &re)
	require.Contains(t, err.Error(), `"ghcr.io/Acme/labeller:v1" is not an image reference to push to (`)
	require.Contains(t, err.Error(), "want REGISTRY/REPOSITORY:TAG, e.g. ghcr.io/jetbake/jetbake-labeller:v0.3.0")
}

// A push to a registry whose name does not resolve (offline, as BuildKit's
// exporter words it through gRPC) is one sentence with the fix, not the
// daemon's error.
func TestPushErrorOffline(t *testing.T) {
	raw := errors.New(`failed to solve: failed to push ghcr.io/jetbake/jetbake-labeller:v0.1.0: failed to do request: Head "https://ghcr.io/v2/jetbake/jetbake-labeller/blobs/sha256:6b72": dial tcp: lookup ghcr.io on 10.255.255.53:53: dial udp 10.255.255.53:53: connect: network is unreachable`)
	msg := pushError("ghcr.io/jetbake/jetbake-labeller:v0.1.0", raw).Error()
	require.Contains(t, msg, "push the labeller image ghcr.io/jetbake/jetbake-labeller:v0.1.0: cannot reach the registry ghcr.io: the registry's name ghcr.io does not resolve to an address")
	require.Contains(t, msg, "fix: ")
	other := pushError("r/x:1", errors.New("failed to solve: disk full"))
	require.Equal(t, "make and push the labeller image r/x:1: failed to solve: disk full", other.Error())
}
