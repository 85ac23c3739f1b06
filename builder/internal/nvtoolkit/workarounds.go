package nvtoolkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// The fake hosts need three workarounds, all for behaviours of
// nvidia-container-toolkit v1.20 that a Jetson, whose host root is /, never
// meets. Each is below with the toolkit code it works around.

// Workaround names one of the three workarounds below.
type Workaround string

// The workarounds, which HostSpec.Without can leave out to show what each
// one prevents.
const (
	// TegraReleaseInL4TCSV lists /etc/nv_tegra_release in l4t.csv.
	TegraReleaseInL4TCSV Workaround = "nv_tegra_release in l4t.csv"
	// LinksWithoutRoot strips the host root from the CSV links.
	LinksWithoutRoot Workaround = "CSV links without the host root"
	// ContainerLdconfig runs the container's ldconfig for update-ldcache.
	ContainerLdconfig Workaround = "the container's ldconfig"
)

// Workaround 1: the runtime mounts /etc/nv_tegra_release of the machine's
// own /. internal/platform-support/tegra/tegra.go (New) adds it to every
// csv-mode container through a file locator with an empty root, not under
// nvidia-container-cli.root, and Tegra detection (mode "auto") reads it, or
// /sys/devices/soc0/family, from / too. So the fake hosts set mode "csv"
// (mode "cdi" for the CDI run) and list the file in l4t.csv: a lib row, which
// the runtime finds under the driver root like every other and mounts at the
// same path. l4t.csv is one of the three files the runtime reads by default
// (internal/platform-support/tegra/csv/csv.go, BaseFilesOnly); from R36 on
// the real hosts have no l4t.csv, so there it holds that row alone.
const tegraReleaseRow = "/etc/nv_tegra_release"

// csvFiles returns the host's CSV files: its line's, with the
// nv_tegra_release row appended to l4t.csv, which is added when the line has
// none.
func (h *Host) csvFiles() []File {
	out := slices.Clone(h.Line.Files)
	if slices.Contains(h.Without, TegraReleaseInL4TCSV) {
		return out
	}
	row := Row{Kind: "lib", Path: tegraReleaseRow}
	for i, f := range out {
		if f.Name == "l4t.csv" {
			out[i].Rows = append(slices.Clone(f.Rows), row)
			return out
		}
	}
	return append(out, File{Name: "l4t.csv", Rows: []Row{row}})
}

// Workaround 2: sym rows keep the driver root. For the links of sym rows,
// internal/platform-support/tegra/symlinks.go (getCSVFileSymlinks) gives
// the create-symlinks hook each link's path as located under the driver root,
// prefix included ("--link libcuda.so.1.1::ROOT/usr/lib/.../libcuda.so.1"), so
// the hook makes the link at ROOT/usr/lib/... inside the container. The fake
// host's hook program strips the prefix. The runtime runs the hooks with the
// program named by nvidia-ctk.path, and calls it "nvidia-ctk hook NAME ..."
// only when that file is named nvidia-ctk (internal/discover/hooks.go,
// getFixedArgsForCDIHookCLI), so the wrapper keeps that name; it runs the
// real nvidia-cdi-hook, and everything but hooks with the real nvidia-ctk.
//
// Workaround 3: the update-ldcache hook runs the machine's ldconfig in the
// container. internal/ldconfig (NewRunner, prepareRoot, SafeExec) copies the
// host's ldconfig (--ldconfig-path, /sbin/ldconfig unless given; the csv mode
// gives none) into a memfd, pivots into the container's root and executes
// it there. On this x86 machine that is x86's ldconfig in an arm64 root: it
// rewrites /etc/ld.so.cache with no entries, and a program that links
// libcuda.so.1 no longer finds the mounted driver. An aarch64 ldconfig cannot
// be given instead: executed from the memfd it does not reach QEMU's binfmt
// handler. So the wrapper passes update-ldcache --ldconfig-path with the
// trampoline (./trampoline), a static program for this machine that runs the
// container's own /sbin/ldconfig, an aarch64 program started by path.
const ctkWrapperTemplate = `#!/bin/sh
# nvidia-ctk of the fake Jetson host at @ROOT@, written by jetbake's
# builder/internal/nvtoolkit (workarounds.go, 2 and 3): "nvidia-ctk hook NAME
# ARGS..." runs nvidia-cdi-hook NAME with the links of create-symlinks rid of
# the host root and, for update-ldcache, the ldconfig trampoline; anything
# else runs nvidia-ctk.
root=@QROOT@
if [ "$1" != hook ]; then exec @CTK@ "$@"; fi
shift
name=$1
shift
n=$#
ldconfig=
for a do
  case $a in
  *::"$root"/*) a="${a%%::*}::${a#*::"$root"}" ;;
  --ldconfig-path|--ldconfig-path=*) ldconfig=given ;;
  esac
  set -- "$@" "$a"
done
shift "$n"
if [ "$name" = update-ldcache ] && [ -z "$ldconfig" ]; then set -- --ldconfig-path @TRAMPOLINE@ "$@"; fi
exec @CDIHOOK@ "$name" "$@"
`

// ctkWrapper is the host's nvidia-ctk, with trampoline as its ldconfig.
func (h *Host) ctkWrapper(tk Toolkit, trampoline string) []byte {
	strip, ldconfig := h.Root, shQuote(trampoline)
	if slices.Contains(h.Without, LinksWithoutRoot) {
		strip = "/nonexistent-host-root"
	}
	if slices.Contains(h.Without, ContainerLdconfig) {
		ldconfig = "/sbin/ldconfig" // the machine's, as the hook's default
	}
	return []byte(strings.NewReplacer(
		"@ROOT@", h.Root, "@QROOT@", shQuote(strip), "@CTK@", shQuote(tk.CTK),
		"@CDIHOOK@", shQuote(tk.CDIHook), "@TRAMPOLINE@", ldconfig,
	).Replace(ctkWrapperTemplate))
}

// shQuote quotes s for sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// trampolinePackage is the ldconfig trampoline's package in this module.
const trampolinePackage = "./builder/internal/nvtoolkit/trampoline"

// BuildTrampoline builds the ldconfig trampoline (workaround 3) from the
// checkout at repoRoot into dir, static, for this machine's architecture.
func BuildTrampoline(ctx context.Context, repoRoot, dir string) (string, error) {
	out := filepath.Join(dir, "ldconfig-trampoline")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, trampolinePackage)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the ldconfig trampoline: %w: %s", err, b)
	}
	return out, nil
}
