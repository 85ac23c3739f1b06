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
// capability and returns its standard output. When it fails with one of
// the exit statuses NVIDIA documents, the error says what the status means
// instead of repeating what nvidia-smi printed (its advice is for desktop
// drivers and runs over several lines).
func runNvidiaSMI(ctx context.Context, root host.Root, path string, env Environ) ([]byte, error) {
	out, err := runTool(ctx, env, root.Path(path), "--query-gpu=compute_cap", "--format=csv,noheader")
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if meaning, ok := smiExitMeanings[exit.ExitCode()]; ok {
			return nil, fmt.Errorf("exit status %d: %s", exit.ExitCode(), meaning)
		}
	}
	return out, err
}

// smiExitMeanings are nvidia-smi's exit statuses ("RETURN VALUE" in
// nvidia-smi(1) of NVIDIA's driver, as Debian ships it with the driver's
// user space). 12 and 9 are what a container meets: NVIDIA's NVML library
// (libnvidia-ml.so.1) is not found, or NVML finds no driver to talk to (no
// GPU device node). The driver 535's nvidia-smi prints, for them, "NVIDIA-SMI
// couldn't find libnvidia-ml.so library in your system..." and "NVIDIA-SMI
// has failed because it couldn't communicate with the NVIDIA driver...".
var smiExitMeanings = map[int]string{
	2:   "an argument is invalid",
	3:   "the query is not available on this GPU",
	4:   "no permission to access the GPU",
	6:   "no GPU was found",
	9:   "it cannot reach the NVIDIA driver (no GPU device node, or no kernel driver)",
	12:  "NVIDIA's NVML library (libnvidia-ml.so.1) could not be found or loaded",
	13:  "its NVML library lacks the query",
	15:  "the GPU has fallen off the bus or is inaccessible",
	255: "an internal driver error",
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
// returns its standard output and, when it failed, why (toolError).
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
		return stdout.Bytes(), toolError(ctx, deadline.Sub(start), err, stdout.Bytes(), stderr.Bytes())
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
		return &lineError{line: line, err: err}
	}
	if line := firstLine(stdout); line != "" {
		return fmt.Errorf("%w: %s", err, line)
	}
	return err
}

// lineError is a helper that failed and said why on stderr: its message
// is that line; it wraps the exit error.
type lineError struct {
	line string
	err  error
}

func (e *lineError) Error() string { return e.line }
func (e *lineError) Unwrap() error { return e.err }

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
