package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// Names of the three tools in the table: jetbake, bake with its default
// output, and bake with rewrite-timestamp=true (reproducible, but every
// export rewrites the layers, uncached).
const (
	toolJetbake = "jetbake"
	toolBake    = "bake"
	toolBakeRTS = "bake-rts"
)

// tools are the columns of the tables, in order.
var tools = []string{toolJetbake, toolBake, toolBakeRTS}

// toolTitles head the tables' columns.
var toolTitles = map[string]string{toolJetbake: "jetbake", toolBake: "bake (default)", toolBakeRTS: "bake (rewrite-timestamp)"}

// parseTools parses -tools: jetbake always comes first, the others follow in
// the order of tools.
func parseTools(v string) ([]string, error) {
	given := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if _, ok := toolTitles[f]; !ok {
			return nil, fmt.Errorf("-tools %q: unknown tool %q; use %s", v, f, strings.Join(tools, ", "))
		}
		given[f] = true
	}
	if !given[toolJetbake] {
		return nil, fmt.Errorf("-tools %q: jetbake is what the bench measures; add it", v)
	}
	var out []string
	for _, t := range tools {
		if given[t] {
			out = append(out, t)
		}
	}
	return out, nil
}

// builderName is the buildx builder the bench creates in its own BUILDX_CONFIG.
const builderName = "jetbake-bench"

// contender is one tool, ready to build a matrix on one build path into
// its own registry.
type contender struct {
	name string
	path string // pathQEMU or pathCross
	reg  *e2e.Env
	plan *plan.Plan
	file string // the matrix (jetbake) or the bake file (bake)
	// clearCache empties what the tool keeps between builds outside
	// BuildKit's cache (jetbake's verdict store), before a cold build; nil
	// for a tool that keeps nothing.
	clearCache func() error
	build      func(ctx context.Context) (result, error)
}

// result is what one build measured.
type result struct {
	wall time.Duration
	// maxRSS is the tool process's peak resident memory in bytes.
	maxRSS int64
	// digests are the pushed image digests by release.
	digests map[string]string
	// timings are the build's phases: jetbake's --metadata-file report, or
	// read from bake's rawjson progress by the same rules (bakePhases).
	timings *progress.Timings
}

func (c *contender) close() { _ = c.reg.Close() }

// newRegistry starts a registry under dir, pushes the stand-in bases of the
// matrix of sz to it and returns the matrix (pointing at it) and its plan.
// Each tool's registry listens on the same address in every round, so that
// the images' references, and so their digests, can be the same.
func newRegistry(ctx context.Context, root, dir string, sz size, path string, addr *string, bases *standins) (*e2e.Env, string, *plan.Plan, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", nil, err
	}
	if *addr == "" {
		*addr = "127.0.0.1:0"
	}
	reg, err := e2e.StartAt(root, dir, *addr)
	if err != nil {
		return nil, "", nil, err
	}
	*addr = reg.Registry
	matrixPath := filepath.Join(dir, "matrix.json")
	if err := writeMatrix(root, reg.Registry, matrixPath, sz, path); err != nil {
		reg.Close()
		return nil, "", nil, err
	}
	p, err := e2e.LoadPlan(matrixPath, e2e.AllowStandin(root))
	if err == nil {
		err = bases.push(ctx, reg.Registry, standin.ForPlan(p))
	}
	if err != nil {
		reg.Close()
		return nil, "", nil, err
	}
	return reg, matrixPath, p, nil
}

// newJetbake runs `jetbake build --push --build-path path` on the daemon
// at addr, with the bench's own cache folder (cfg.cacheHome), whose
// verdict store its cold builds clear.
func newJetbake(ctx context.Context, cfg config, addr, dir string, sz size, path string) (*contender, error) {
	reg, matrixPath, p, err := newRegistry(ctx, cfg.root, dir, sz, path, cfg.registryAddr(toolJetbake, path), cfg.standins)
	if err != nil {
		return nil, err
	}
	metadata := filepath.Join(dir, "metadata.json")
	args := []string{"build", "--addr", addr, "--matrix", matrixPath, "--mirror", "nvcr.io=" + reg.Registry,
		"--push", "--progress", "quiet", "--entrypoint-dir", cfg.entrypointDir, "--metadata-file", metadata,
		"--revision", cfg.revision, "--source-date-epoch", fmt.Sprint(benchEpoch), "--build-path", path,
		"--provenance", "false"} // as the bake file disables it: the same work on both sides
	// The bench's matrices are in temporary folders: grant the stand-in router.
	args = append(append(args, e2e.AllowStandinFlags(cfg.root)...), cfg.jetbakeArgs...)
	env := append(os.Environ(), "BUILDKIT_HOST=", "XDG_CACHE_HOME="+cfg.cacheHome)
	clearStore := func() error { return clearVerdicts(cfg.cacheHome) }
	return &contender{name: toolJetbake, path: path, reg: reg, plan: p, file: matrixPath, clearCache: clearStore, build: func(ctx context.Context) (result, error) {
		res, _, err := runTool(ctx, cfg.verbose, cfg.root, env, cfg.jetbake, args...)
		if err != nil {
			return res, err
		}
		var report imagebuild.Report
		if err := readJSON(metadata, &report); err != nil {
			return res, err
		}
		res.digests, res.timings = map[string]string{}, report.Timings
		for _, r := range report.Releases {
			res.digests[r.Name] = r.Digest
		}
		return res, nil
	}}, nil
}

// newBake writes the bake file for the matrix of sz and runs `buildx bake`
// with it; rewriteTimestamp sets rewrite-timestamp=true on its output, and
// on the cross path its router targets cross-compile as jetbake's do.
func newBake(ctx context.Context, cfg config, bx *buildx, dir string, sz size, path string, rewriteTimestamp bool) (*contender, error) {
	name := toolBake
	if rewriteTimestamp {
		name = toolBakeRTS
	}
	reg, _, p, err := newRegistry(ctx, cfg.root, dir, sz, path, cfg.registryAddr(name, path), cfg.standins)
	if err != nil {
		return nil, err
	}
	file, bf, err := writeBakeFile(dir, p, bakeInputs{
		Mirrors: refs.Mirrors{"nvcr.io": reg.Registry}, EntrypointDir: cfg.entrypointDir,
		Revision: cfg.revision, Epoch: benchEpoch, RewriteTimestamp: rewriteTimestamp, Cross: path == pathCross,
	})
	if err != nil {
		reg.Close()
		return nil, err
	}
	metadata := filepath.Join(dir, "metadata.json")
	grants := bakeGrants(p, cfg.entrypointDir)
	targets := map[string]bool{}
	for name := range bf.Target {
		targets[name] = true
	}
	builds := 0
	return &contender{name: name, path: path, reg: reg, plan: p, file: file, build: func(ctx context.Context) (result, error) {
		// Each build's progress stays beside the bake file, for -keep:
		// progress-1.rawjson is the round's cold build.
		builds++
		progress := filepath.Join(dir, fmt.Sprintf("progress-%d.rawjson", builds))
		res, err := bx.bake(ctx, file, metadata, progress, targets, grants...)
		if err != nil {
			return res, err
		}
		var md map[string]map[string]any
		if err := readJSON(metadata, &md); err != nil {
			return res, err
		}
		res.digests = map[string]string{}
		for _, rel := range p.Releases {
			d, _ := md[bakeName(rel.Name)]["containerimage.digest"].(string)
			res.digests[rel.Name] = d
		}
		return res, nil
	}}, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// buildx runs the buildx CLI with its own config folder, so that the bench
// neither reads nor changes the user's builders.
type buildx struct {
	bin     string
	dir     string
	addr    string
	verbose bool
}

func (b *buildx) env() []string {
	return append(os.Environ(),
		"BUILDX_CONFIG="+filepath.Join(b.dir, "buildx"),
		"DOCKER_CONFIG="+filepath.Join(b.dir, "docker"),
		"BUILDX_NO_DEFAULT_ATTESTATIONS=1",
		fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch),
		"BUILDKIT_HOST=", "DOCKER_HOST=")
}

// create makes the remote-driver builder on the bench's daemon and bootstraps it.
func (b *buildx) create(ctx context.Context) error {
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return err
	}
	if _, _, err := runTool(ctx, b.verbose, b.dir, b.env(), b.bin, "create", "--driver", "remote", "--name", builderName, "--use", b.addr); err != nil {
		return err
	}
	_, _, err := runTool(ctx, b.verbose, b.dir, b.env(), b.bin, "inspect", "--bootstrap", builderName)
	return err
}

// version is `buildx version`'s line.
func (b *buildx) version(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, b.bin, "version").Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", b.bin, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// bake builds file's default group as a user would: from the bake file's
// folder, reading the local paths outside it that grants lists, as `--allow
// fs.read` grants them (buildx's filesystem entitlements stay on). It writes
// the targets' digests to metadata and reads the build's phases from its
// rawjson progress, which it keeps in the file progress; targets are the
// bake file's, as bakePhases takes them.
func (b *buildx) bake(ctx context.Context, file, metadata, progress string, targets map[string]bool, grants ...string) (result, error) {
	args := []string{"bake", "--builder", builderName, "--file", file, "--progress", "rawjson", "--metadata-file", metadata}
	for _, path := range grants {
		args = append(args, "--allow", "fs.read="+path)
	}
	start := time.Now()
	res, out, err := runTool(ctx, false, filepath.Dir(file), b.env(), b.bin, args...)
	end := start.Add(res.wall)
	_ = os.WriteFile(progress, out, 0o644)
	updates, text := splitRawJSON(out)
	if b.verbose && len(text) > 0 {
		fmt.Fprintf(os.Stderr, "%s\n", strings.Join(text, "\n"))
	}
	if err != nil {
		return res, bakeFailure(err, text, updates)
	}
	res.timings = bakePhases(start, end, updates, targets)
	return res, nil
}

// runTool runs bin with args in dir and returns its wall time and peak
// resident memory, and its output (stdout and stderr); the output is shown
// with verbose, and the end of it is in the error otherwise.
func runTool(ctx context.Context, verbose bool, dir string, env []string, bin string, args ...string) (result, []byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var buf bytes.Buffer
	var w io.Writer = &buf
	if verbose {
		w = io.MultiWriter(&buf, os.Stderr)
	}
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	err := cmd.Start()
	var res result
	if err == nil {
		stop := watchPeakRSS(cmd.Process.Pid, &res.maxRSS)
		err = cmd.Wait()
		stop()
	}
	res.wall = time.Since(start)
	if err != nil {
		return res, buf.Bytes(), &toolError{cmd: filepath.Base(bin) + " " + strings.Join(args, " "), err: err, tail: lastLines(buf.String(), 30)}
	}
	return res, buf.Bytes(), nil
}

// toolError is a tool's failed run: its command line, how it ended and the
// end of its output.
type toolError struct {
	cmd  string
	err  error
	tail string
}

func (e *toolError) Error() string { return fmt.Sprintf("%s: %v\n%s", e.cmd, e.err, e.tail) }

func (e *toolError) Unwrap() error { return e.err }

// watchPeakRSS polls the process's VmHWM (its peak resident memory) in
// /proc until stop is called and keeps the largest value in peak. The
// kernel's rusage cannot be used: Go starts children with vfork, and Linux
// carries the parent's peak into the child's ru_maxrss at exec, so every
// child of a bench process larger than it would report the bench's size.
func watchPeakRSS(pid int, peak *int64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	path := fmt.Sprintf("/proc/%d/status", pid)
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := vmHWM(path); v > *peak {
				*peak = v
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// vmHWM reads the VmHWM line of a /proc status file, in bytes, or 0.
func vmHWM(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
