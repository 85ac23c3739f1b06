package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/e2e"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// Names of the two tools in the table.
const (
	toolJetbake = "jetbake"
	toolBake    = "bake"
)

// builderName is the buildx builder the bench creates in its own BUILDX_CONFIG.
const builderName = "jetbake-bench"

// contender is one tool, ready to build the demo matrix into its own registry.
type contender struct {
	name  string
	reg   *e2e.Env
	plan  *plan.Plan
	file  string // the matrix (jetbake) or the bake file (bake)
	build func(ctx context.Context) error
}

func (c *contender) close() { _ = c.reg.Close() }

// newRegistry starts a registry under dir, pushes the stand-in bases of the
// demo matrix to it and returns the matrix (pointing at it) and its plan.
func newRegistry(root, dir string) (*e2e.Env, string, *plan.Plan, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", nil, err
	}
	reg, err := e2e.Start(root, dir)
	if err != nil {
		return nil, "", nil, err
	}
	matrixPath := filepath.Join(dir, "matrix.json")
	if err := e2e.WriteDemoMatrix(root, reg.Registry, matrixPath); err != nil {
		reg.Close()
		return nil, "", nil, err
	}
	p, err := e2e.LoadPlan(matrixPath)
	if err == nil {
		_, err = reg.PushStandins(p)
	}
	if err != nil {
		reg.Close()
		return nil, "", nil, err
	}
	return reg, matrixPath, p, nil
}

// newJetbake runs `jetbake build --push` on the daemon at addr.
func newJetbake(_ context.Context, cfg config, addr, dir string) (*contender, error) {
	reg, matrixPath, p, err := newRegistry(cfg.root, dir)
	if err != nil {
		return nil, err
	}
	args := []string{"build", "--addr", addr, "--matrix", matrixPath, "--mirror", "nvcr.io=" + reg.Registry,
		"--push", "--progress", "quiet", "--entrypoint-dir", cfg.entrypointDir,
		"--revision", cfg.revision, "--source-date-epoch", fmt.Sprint(benchEpoch),
		"--provenance", "false"} // as the bake file disables it: the same work on both sides
	args = append(args, cfg.jetbakeArgs...)
	env := append(os.Environ(), "BUILDKIT_HOST=")
	return &contender{name: toolJetbake, reg: reg, plan: p, file: matrixPath, build: func(ctx context.Context) error {
		return runTool(ctx, cfg.verbose, cfg.root, env, cfg.jetbake, args...)
	}}, nil
}

// newBake writes the bake file for the demo matrix and runs `buildx bake` with it.
func newBake(_ context.Context, cfg config, bx *buildx, dir string) (*contender, error) {
	reg, _, p, err := newRegistry(cfg.root, dir)
	if err != nil {
		return nil, err
	}
	file, err := writeBakeFile(dir, p, bakeInputs{
		Mirrors: refs.Mirrors{"nvcr.io": reg.Registry}, EntrypointDir: cfg.entrypointDir,
		Revision: cfg.revision, Epoch: benchEpoch,
	})
	if err != nil {
		reg.Close()
		return nil, err
	}
	return &contender{name: toolBake, reg: reg, plan: p, file: file, build: func(ctx context.Context) error {
		return bx.bake(ctx, file, p.Router.Context, cfg.entrypointDir)
	}}, nil
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
	if err := runTool(ctx, b.verbose, b.dir, b.env(), b.bin, "create", "--driver", "remote", "--name", builderName, "--use", b.addr); err != nil {
		return err
	}
	return runTool(ctx, b.verbose, b.dir, b.env(), b.bin, "inspect", "--bootstrap", builderName)
}

// version is `buildx version`'s line.
func (b *buildx) version(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, b.bin, "version").Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", b.bin, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// bake builds file's default group, reading local contexts from the bake
// file's folder and from readable, as `--allow fs.read` grants.
func (b *buildx) bake(ctx context.Context, file string, readable ...string) error {
	args := []string{"bake", "--builder", builderName, "--file", file, "--progress", "quiet"}
	for _, dir := range readable {
		args = append(args, "--allow", "fs.read="+dir)
	}
	return runTool(ctx, b.verbose, filepath.Dir(file), b.env(), b.bin, args...)
}

// runTool runs bin with args in dir; its output is shown with -v, and the end
// of it is in the error otherwise.
func runTool(ctx context.Context, verbose bool, dir string, env []string, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var buf bytes.Buffer
	var w io.Writer = &buf
	if verbose {
		w = io.MultiWriter(&buf, os.Stderr)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, lastLines(buf.String(), 30))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
