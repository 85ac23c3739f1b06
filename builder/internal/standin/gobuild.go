package standin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// teiPackage is the stand-in toolchain's Go source (package tei and its
// commands), relative to the module root.
const teiPackage = "builder/internal/standin/tei"

// goProgram is one linux/arm64 build of a Go command of this module.
type goProgram struct {
	// Pkg is the package, e.g. "./builder/internal/standin/tei/cmd/cargo".
	Pkg string
	// Name is the output's file name.
	Name string
	// CgoLinks are the shared objects linked in, each recorded as DT_NEEDED
	// by its soname: cgo through Debian's aarch64 cross compiler. Without
	// them the program is static (CGO_ENABLED=0).
	CgoLinks []string
	// Cgo builds with cgo even without CgoLinks.
	Cgo bool
	// Tags are build tags.
	Tags []string
}

// buildGo builds prog for linux/arm64 from the module at k.Source into
// k.Cache and returns the binary's path. The key hashes the stand-in's
// source, go.mod and go.sum, the Go version and prog, so a change rebuilds it.
func (k Kit) buildGo(ctx context.Context, prog goProgram) (string, error) {
	if k.Source == "" {
		return "", errors.New("stand-in toolchain: the kit has no Source (the jetbake module root) to build its Go programs from")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("stand-in toolchain: go is not on PATH; it builds the stand-in cargo and router")
	}
	key, err := k.goKey(ctx, goBin, prog)
	if err != nil {
		return "", err
	}
	out := filepath.Join(k.Cache, key, prog.Name)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	tmp := out + ".tmp-" + fmt.Sprint(os.Getpid())
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", tmp}
	if len(prog.Tags) > 0 {
		args = append(args, "-tags", strings.Join(prog.Tags, ","))
	}
	cmd := exec.CommandContext(ctx, goBin, append(args, prog.Pkg)...)
	cmd.Dir = k.Source
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "GOFLAGS=")
	if prog.Cgo || len(prog.CgoLinks) > 0 {
		cc, err := ARM64.compiler()
		if err != nil {
			return "", err
		}
		// --no-as-needed: every library is recorded, as rustc's link line
		// records the ones TEI's crates ask for.
		cmd.Env = append(cmd.Env, "CGO_ENABLED=1", "CC="+cc,
			"CGO_LDFLAGS=-Wl,--no-as-needed "+strings.Join(prog.CgoLinks, " ")+" -Wl,--as-needed")
	} else {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if outb, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build %s for linux/arm64: %w: %s", prog.Pkg, err, outb)
	}
	return out, os.Rename(tmp, out)
}

// goKey hashes what goes into a build of prog.
func (k Kit) goKey(ctx context.Context, goBin string, prog goProgram) (string, error) {
	sum := sha256.New()
	ver, err := exec.CommandContext(ctx, goBin, "version").Output()
	if err != nil {
		return "", fmt.Errorf("go version: %w", err)
	}
	fmt.Fprintf(sum, "%s\x00%s\x00%s\x00%v\x00%s\x00", ver, prog.Pkg, prog.Name, prog.Cgo, strings.Join(prog.Tags, ","))
	for _, l := range prog.CgoLinks {
		data, err := os.ReadFile(l)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "%s\x00%x\x00", filepath.Base(l), sha256.Sum256(data))
	}
	// The stand-in's packages and what they import from this module
	// (computecap, whose table names the Jetson CPUs).
	var files []string
	for _, dir := range []string{teiPackage, "computecap"} {
		root := filepath.Join(k.Source, dir)
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && dir == "computecap" && path != root {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("stand-in toolchain source %s: %w", root, err)
		}
	}
	sort.Strings(files)
	for _, f := range append(files, filepath.Join(k.Source, "go.mod"), filepath.Join(k.Source, "go.sum")) {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "%s\x00%x\x00", strings.TrimPrefix(f, k.Source), sha256.Sum256(data))
	}
	return hex.EncodeToString(sum.Sum(nil))[:20], nil
}
