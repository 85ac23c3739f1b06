package detect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// toolTimeout bounds nvidia-smi and jetbake-cudaprobe.
const toolTimeout = 5 * time.Second

// smiName is nvidia-smi's file name.
const smiName = "nvidia-smi"

// findNvidiaSMI looks for an executable nvidia-smi in the PATH entries
// and then in /usr/bin and /usr/sbin, all under the root. It returns its
// path in the root ("" when absent) and the folders it looked in.
func findNvidiaSMI(root host.Root, env Environ) (string, []string) {
	dirs := append(strings.Split(env.Get(envPath), ":"), "/usr/bin", "/usr/sbin")
	return root.Find(smiName, dirs, host.Executable)
}

// runNvidiaSMI asks nvidia-smi at path (in the root) for the compute
// capability and returns its standard output.
func runNvidiaSMI(ctx context.Context, root host.Root, path string, env Environ) ([]byte, error) {
	return runTool(ctx, env, root.Path(path), "--query-gpu=compute_cap", "--format=csv,noheader")
}

// parseNvidiaSMI reads the answer of
// `nvidia-smi --query-gpu=compute_cap --format=csv,noheader`: one line per
// GPU such as "8.6"; GPU 0's line counts. JetPack 6's nvidia-smi answers
// "[N/A]" or "N/A".
func parseNvidiaSMI(out []byte) (computecap.Capability, error) {
	first := ""
	for line := range strings.SplitSeq(string(out), "\n") {
		if first = strings.TrimSpace(line); first != "" {
			break
		}
	}
	switch {
	case first == "":
		return computecap.Capability{}, errors.New("printed no compute capability")
	case strings.Trim(first, "[]") == "N/A" || strings.HasPrefix(first, "["):
		return computecap.Capability{}, fmt.Errorf("answered %s, not a compute capability", computecap.QuoteShort(first))
	}
	c, err := computecap.Parse(first)
	if err != nil {
		return computecap.Capability{}, fmt.Errorf("answered %s: %w", computecap.QuoteShort(first), err)
	}
	return c, nil
}

// runTool runs the helper program at path (a real path) with args and env,
// within toolTimeout or the caller's deadline when that comes sooner, and
// returns its standard output, or why it failed (toolError).
func runTool(ctx context.Context, env Environ, path string, args ...string) ([]byte, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		deadline, _ := ctx.Deadline()
		return nil, toolError(ctx, deadline.Sub(start), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// toolError describes why a helper program failed: the deadline that
// fired (given is the time the program had: toolTimeout, or less when the
// caller's deadline came first), its first line on stderr (the probe's
// one-line reason), or its exit status and first line on stdout.
func toolError(ctx context.Context, given time.Duration, err error, stdout, stderr []byte) error {
	if ctx.Err() != nil {
		return fmt.Errorf("no answer within %s", Roughly(given))
	}
	if line := firstLine(stderr); line != "" {
		return errors.New(line)
	}
	if line := firstLine(stdout); line != "" {
		return fmt.Errorf("%w: %s", err, line)
	}
	return err
}

// firstLine returns the first non-empty line of out, trimmed and cut to 200 bytes.
func firstLine(out []byte) string {
	for line := range strings.SplitSeq(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = line[:200] + "..."
			}
			return line
		}
	}
	return ""
}

// Roughly rounds a time given to a helper for a message: to 10 ms from
// 100 ms on (5s, 100ms, 1.25s), to the millisecond below.
func Roughly(d time.Duration) time.Duration {
	if d >= 100*time.Millisecond {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
