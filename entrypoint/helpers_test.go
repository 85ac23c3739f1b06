package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// execCall records what run asked to exec.
type execCall struct {
	path string
	argv []string
	env  []string
}

// result is the outcome of one in-process run.
type result struct {
	code           int
	stdout, stderr string
	exec           *execCall
}

// runIn runs the entrypoint in-process on root with args and extra
// environment entries, capturing the exec.
func runIn(t testing.TB, root string, args []string, extra ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	var call *execCall
	fake := func(path string, argv, env []string) error {
		call = &execCall{path: path, argv: argv, env: env}
		return nil
	}
	code := run(context.Background(), args, eptest.BaseEnv(root, extra...), &stdout, &stderr, fake)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String(), exec: call}
}

// TestMain removes the binaries eptest built after the tests.
func TestMain(m *testing.M) { eptest.Main(m) }

// missingNodes is the sentence of an Orin container on JetPack 6 that has
// the runtime's release file and libcuda at lib but no device node.
func missingNodes(board, lib string) string {
	return "this is a Jetson Orin, SM 8.7 (" + board + ", from soc_id) and the NVIDIA runtime's files are in this container " +
		"(/etc/nv_tegra_release, " + lib + "), but not the device nodes its GPU driver (nvgpu) needs, " +
		"/dev/nvhost-ctrl-gpu (or /dev/nvgpu/igpu0/ctrl) and /dev/nvmap, without which CUDA reaches no GPU: " +
		"start the container with --runtime nvidia (or --device nvidia.com/gpu=all with CDI), which mounts them, " +
		"and if it was, check that the CSV files in /etc/nvidia-container-runtime/host-files-for-container.d list them. " +
		"Run with --explain for details.\n"
}
