package standin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// teiPackage is the stand-in toolchain's Go source (package tei and its
// commands), relative to the module root.
const teiPackage = "builder/internal/standin/tei"

// goProgram is one linux/arm64 (or linux/Arch) build of a Go command of
// this module.
type goProgram struct {
	// Arch is GOARCH: "" is arm64, the Jetson's; amd64 for the programs of
	// a cross build base, which run on the build machine. cgo is arm64 only.
	Arch Arch
	// Pkg is the package, e.g. "./builder/internal/standin/tei/cmd/cargo".
	Pkg string
	// Name is the output's file name.
	Name string
	// CgoLinks are the shared objects linked in, each recorded as DT_NEEDED
	// by its soname: cgo through Debian's aarch64 cross compiler. Without
	// them the program is static (CGO_ENABLED=0).
	CgoLinks []string
	// Objects are object files linked in once, by the external linker
	// (-extldflags): CGO_LDFLAGS would link them twice, as cgo's own
	// link step and the final one both get them.
	Objects []string
	// Cgo builds with cgo even without CgoLinks.
	Cgo bool
	// Tags are build tags.
	Tags []string
}

// buildGo builds prog for linux/arm64 (linux/prog.Arch) from the module at k.Source into
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
	ldflags := "-s -w -buildid="
	if len(prog.Objects) > 0 {
		ldflags += " -linkmode=external -extldflags='" + strings.Join(prog.Objects, " ") + "'"
	}
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=" + ldflags, "-o", tmp}
	if len(prog.Tags) > 0 {
		args = append(args, "-tags", strings.Join(prog.Tags, ","))
	}
	cmd := exec.CommandContext(ctx, goBin, append(args, prog.Pkg)...)
	cmd.Dir = k.Source
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+string(prog.goarch()), "GOFLAGS=")
	if prog.cgoEnabled() == "1" {
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
		return "", fmt.Errorf("build %s for linux/%s: %w: %s", prog.Pkg, prog.goarch(), err, outb)
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
	if prog.Arch != "" && prog.Arch != ARM64 {
		fmt.Fprintf(sum, "arch=%s\x00", prog.Arch)
	}
	for _, l := range append(slices.Clone(prog.CgoLinks), prog.Objects...) {
		data, err := os.ReadFile(l)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "%s\x00%x\x00", filepath.Base(l), sha256.Sum256(data))
	}
	files, err := k.moduleFiles(ctx, goBin, prog)
	if err != nil {
		return "", err
	}
	files = append(files, [2]string{"go.mod", filepath.Join(k.Source, "go.mod")}, [2]string{"go.sum", filepath.Join(k.Source, "go.sum")})
	for _, f := range files {
		data, err := os.ReadFile(f[1])
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "%s\x00%x\x00", f[0], sha256.Sum256(data))
	}
	return hex.EncodeToString(sum.Sum(nil))[:20], nil
}

// moduleFiles lists the Go and C sources of this module that a build of prog
// compiles, as `go list -deps` finds them for that build: those of prog's
// package and of every package of the module it imports (the stand-in's
// packages, computecap). Each is its import path and file name, which name it
// wherever the checkout is, and the file's path.
func (k Kit) moduleFiles(ctx context.Context, goBin string, prog goProgram) ([][2]string, error) {
	const format = `{{with .Module}}{{if .Main}}` +
		`{{range $.GoFiles}}{{$.ImportPath}}/{{.}}{{"\t"}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}` +
		`{{range $.CgoFiles}}{{$.ImportPath}}/{{.}}{{"\t"}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}` +
		`{{range $.CFiles}}{{$.ImportPath}}/{{.}}{{"\t"}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}` +
		`{{range $.HFiles}}{{$.ImportPath}}/{{.}}{{"\t"}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}` +
		`{{end}}{{end}}`
	args := []string{"list", "-deps", "-f", format}
	if len(prog.Tags) > 0 {
		args = append(args, "-tags", strings.Join(prog.Tags, ","))
	}
	cmd := exec.CommandContext(ctx, goBin, append(args, prog.Pkg)...)
	cmd.Dir = k.Source
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+string(prog.goarch()), "GOFLAGS=", "CGO_ENABLED="+prog.cgoEnabled())
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
		}
		return nil, fmt.Errorf("stand-in toolchain: list the sources of %s: %w", prog.Pkg, err)
	}
	var files [][2]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, path, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("stand-in toolchain: go list answered %q for the sources of %s", line, prog.Pkg)
		}
		files = append(files, [2]string{name, path})
	}
	return files, nil
}

// goarch is GOARCH of a build of prog.
func (prog goProgram) goarch() Arch {
	if prog.Arch == "" {
		return ARM64
	}
	return prog.Arch
}

// cgoEnabled is CGO_ENABLED for a build of prog.
func (prog goProgram) cgoEnabled() string {
	if prog.Cgo || len(prog.CgoLinks) > 0 {
		return "1"
	}
	return "0"
}
