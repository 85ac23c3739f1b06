// Package entrypoints provides the linux/arm64 jetbake-entrypoint,
// jetbake-cudaprobe and jetbake-probe binaries that every image gets, matching the jetbake
// that builds the image. They come, first found:
//
//  1. embedded in a release binary (`make release`, build tag jetbake_embed);
//  2. from linux-arm64/ next to the jetbake binary (`make build` in a checkout);
//  3. built on demand from jetbake's module source, for a jetbake installed
//     with `go install github.com/jetbake/jetbake/builder/cmd/jetbake@VERSION`:
//     the source is in the module cache, and the binaries are built once per
//     version into the user cache folder.
//
// Its errors name those three builds of jetbake (make release, make build,
// go install), which are this package's subject; binaries it cannot give
// are a *MissingError, to which a command that takes a folder of binaries
// instead adds its own option.
package entrypoints

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/module"

	"github.com/jetbake/jetbake/builder/version"
)

// The binaries, as named in the folder Dir returns.
const (
	// Entrypoint is the image's entrypoint.
	Entrypoint = "jetbake-entrypoint"
	// CUDAProbe is the helper the entrypoint and the probe run to ask libcuda.
	CUDAProbe = "jetbake-cudaprobe"
	// Probe writes hardware evidence for `jetbake evidence add`.
	Probe = "jetbake-probe"
)

// packages maps each binary to its package in jetbake's module.
func packages() map[string]string {
	return map[string]string{Entrypoint: "./entrypoint", CUDAProbe: "./entrypoint/cudaprobe", Probe: "./entrypoint/probe"}
}

// Option configures Dir.
type Option func(*options)

type options struct {
	info     version.Info
	exeDir   string
	cacheDir string
	embedded fs.FS
	logf     func(string, ...any)
}

// WithVersion sets the jetbake whose entrypoints are wanted (default: the running one).
func WithVersion(info version.Info) Option { return func(o *options) { o.info = info } }

// WithExeDir sets the folder of the jetbake binary (default: os.Executable's).
func WithExeDir(dir string) Option { return func(o *options) { o.exeDir = dir } }

// WithCacheDir sets the folder binaries are extracted or built into
// (default: jetbake/entrypoints in the user cache folder).
func WithCacheDir(dir string) Option { return func(o *options) { o.cacheDir = dir } }

// WithLogf receives a line when the binaries are built, which takes a while.
func WithLogf(logf func(string, ...any)) Option { return func(o *options) { o.logf = logf } }

// MissingError is entrypoint binaries that Dir can neither find nor make.
type MissingError struct {
	// Problem says what is missing and how to get it from a build of
	// jetbake, without the other way: a folder of binaries of one's own.
	Problem string
	// Err is the underlying error, if any.
	Err error
}

// Error is Problem with the other way.
func (e *MissingError) Error() string {
	return e.Problem + ", or use a folder of linux/arm64 entrypoint binaries of your own"
}

// Unwrap returns Err.
func (e *MissingError) Unwrap() error { return e.Err }

// Dir returns a folder holding the linux/arm64 Entrypoint, CUDAProbe and Probe of
// this jetbake, and says where they came from. Binaries it cannot give are
// a *MissingError.
func Dir(ctx context.Context, opts ...Option) (dir, source string, err error) {
	o := options{info: version.Get(), embedded: embedded(), logf: func(string, ...any) {}}
	if exe, err := os.Executable(); err == nil {
		o.exeDir = filepath.Dir(exe)
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", "", &MissingError{Problem: fmt.Sprintf("find a folder for the entrypoint binaries: %v: set XDG_CACHE_HOME or HOME", err), Err: err}
		}
		o.cacheDir = filepath.Join(base, "jetbake", "entrypoints")
	}
	if o.embedded != nil {
		dir, err := extract(o.embedded, o.cacheDir)
		return dir, "embedded in jetbake", err
	}
	if o.exeDir != "" && complete(filepath.Join(o.exeDir, "linux-arm64")) {
		return filepath.Join(o.exeDir, "linux-arm64"), "next to jetbake", nil
	}
	if o.info.FromModule {
		dir, err := buildFromModule(ctx, o)
		return dir, "built from jetbake " + o.info.Version + "'s module source", err
	}
	return "", "", &MissingError{Problem: fmt.Sprintf("jetbake %s has no linux/arm64 entrypoint binaries: none are embedded, none are in %s, and no module source to build them from; "+
		"install with 'go install %s/builder/cmd/jetbake@VERSION', use a release binary, run 'make build' in a checkout",
		o.info.Version, filepath.Join(o.exeDir, "linux-arm64"), version.ModulePath)}
}

// complete reports whether dir holds every binary.
func complete(dir string) bool {
	for name := range packages() {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// extract writes the embedded binaries once into a folder named by their
// content hash, through a temporary folder and a rename.
func extract(fsys fs.FS, cacheDir string) (string, error) {
	h := sha256.New()
	files := map[string][]byte{}
	// In a fixed order: the folder is named by the hash of the contents.
	for _, name := range slices.Sorted(maps.Keys(packages())) {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return "", fmt.Errorf("embedded entrypoints lack %s: rebuild jetbake with 'make release'", name)
		}
		files[name] = data
		h.Write(data)
	}
	dir := filepath.Join(cacheDir, "embedded-"+hex.EncodeToString(h.Sum(nil))[:16], "linux-arm64")
	if complete(dir) {
		return dir, nil
	}
	return dir, publish(dir, func(tmp string) error {
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(tmp, name), data, 0o755); err != nil {
				return err
			}
		}
		return nil
	})
}

// buildFromModule builds the binaries from the module cache's copy of
// jetbake at o.info.Version, once per version.
func buildFromModule(ctx context.Context, o options) (string, error) {
	escaped, err := module.EscapeVersion(o.info.Version)
	if err != nil {
		return "", fmt.Errorf("jetbake version %q: %w", o.info.Version, err)
	}
	dir := filepath.Join(o.cacheDir, escaped, "linux-arm64")
	if complete(dir) {
		return dir, nil
	}
	src, err := moduleSource(ctx, o.info.Version)
	if err != nil {
		return "", err
	}
	o.logf("building the linux/arm64 entrypoint binaries of jetbake %s from %s (once per version)", o.info.Version, src)
	return dir, publish(dir, func(tmp string) error {
		for name, pkg := range packages() {
			cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=",
				"-o", filepath.Join(tmp, name), pkg)
			cmd.Dir = src
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64", "GOWORK=off", "GOFLAGS=-mod=readonly")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("build %s from %s: %w: %s", pkg, src, err, strings.TrimSpace(string(out)))
			}
		}
		return nil
	})
}

// moduleSource is the module cache's folder of jetbake at v.
func moduleSource(ctx context.Context, v string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", &MissingError{Problem: fmt.Sprintf("jetbake %s builds its entrypoint binaries with Go, but 'go env GOMODCACHE' failed (%v): put the Go toolchain on PATH", v, err), Err: err}
	}
	path, err := module.EscapePath(version.ModulePath)
	if err != nil {
		return "", err
	}
	ev, err := module.EscapeVersion(v)
	if err != nil {
		return "", err
	}
	src := filepath.Join(strings.TrimSpace(string(out)), path+"@"+ev)
	if _, err := os.Stat(filepath.Join(src, "entrypoint")); err != nil {
		return "", &MissingError{Problem: fmt.Sprintf("the source of jetbake %s is not in the module cache at %s: run 'go install %s/builder/cmd/jetbake@%s' again", v, src, version.ModulePath, v), Err: err}
	}
	return src, nil
}

// publish fills a temporary folder beside dir with fill and renames it to
// dir; a concurrent run that published first wins.
func publish(dir string, fill func(tmp string) error) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-")
	if err != nil {
		return fmt.Errorf("create a folder beside %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil && !complete(dir) {
		return fmt.Errorf("place the entrypoint binaries in %s: %w", dir, errors.Unwrap(err))
	}
	return nil
}
