package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/computecap"
)

// printDeclared shows the release on declared facts before the build: the
// facts file beside the demo's matrix that declares the fictional JetPack
// 7.3, what `jetbake validate` and `jetbake plan` say of it, and validate's
// refusal of a declared row that contradicts jetbake's table (a copy of
// the matrix whose facts file also declares JetPack 7.2 with CUDA 13.1).
func printDeclared(ctx context.Context, out io.Writer, root, work, matrixPath string) error {
	fmt.Fprintf(out, "==> %s rests on declared facts: %s beside the matrix (\"facts\": %q)\n%s",
		e2e.DeclaredRelease, e2e.DeclaredFactsFile, e2e.DeclaredFactsFile, indent(e2e.DeclaredFacts))
	allow := e2e.AllowStandinFlags(root)
	text, err := jetbakeOutput(ctx, root, append([]string{"validate", "--matrix", matrixPath}, allow...)...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "==> jetbake validate\n%s", indent(text))
	text, err = jetbakeOutput(ctx, root, append([]string{"plan", "--matrix", matrixPath, "--release", e2e.DeclaredRelease}, allow...)...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "==> jetbake plan --release %s (its facts and build path)\n", e2e.DeclaredRelease)
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "facts:") || strings.HasPrefix(t, "build path:") {
			fmt.Fprintf(out, "    %s\n", t)
		}
	}
	return printContradiction(ctx, out, root, work, matrixPath)
}

// printContradiction runs validate on a copy of the matrix whose facts file
// declares JetPack 7.2 with CUDA 13.1 beside 7.3: it must refuse the
// matrix (exit 1, validate's finding) naming the file, line and field, and
// jetbake's row.
func printContradiction(ctx context.Context, out io.Writer, root, work, matrixPath string) error {
	dir := filepath.Join(work, "contradicts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	row := e2e.DeclaredRows().JetPacks[0]
	declared, err := json.Marshal(row)
	if err != nil {
		return err
	}
	row.JetPack, row.L4T, row.CUDA = "7.2", "39.2.0", computecap.CUDAVersion{Major: 13, Minor: 1}
	wrong, err := json.Marshal(row)
	if err != nil {
		return err
	}
	facts := []byte("{\n  \"jetpacks\": [\n    " + string(declared) + ",\n    " + string(wrong) + "\n  ]\n}\n")
	data, err := os.ReadFile(matrixPath)
	if err != nil {
		return err
	}
	copied := filepath.Join(dir, "matrix.json")
	if err := errors.Join(os.WriteFile(copied, data, 0o644), os.WriteFile(filepath.Join(dir, e2e.DeclaredFactsFile), facts, 0o644)); err != nil {
		return err
	}
	text, err := jetbakeOutput(ctx, root, append([]string{"validate", "--matrix", copied}, e2e.AllowStandinFlags(root)...)...)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(text, `jetpacks[1].cuda: "13.1": contradicts jetbake's table`) {
		return fmt.Errorf("jetbake validate of a facts file declaring JetPack 7.2 with CUDA 13.1: want exit 1 and the contradiction, got %v:\n%s", err, text)
	}
	fmt.Fprintf(out, "==> jetbake validate, with a facts file that also declares JetPack 7.2 with CUDA 13.1 (exit 1)\n%s", indent(text))
	return nil
}

// jetbakeOutput runs bin/jetbake with args and returns its output,
// standard error included.
func jetbakeOutput(ctx context.Context, root string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "bin", "jetbake"), args...)
	cmd.Dir = root
	data, err := cmd.CombinedOutput()
	if err != nil {
		return string(data), fmt.Errorf("jetbake %s: %w", args[0], err)
	}
	return string(data), nil
}

// indent puts four spaces before every line of text.
func indent(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	return b.String()
}
