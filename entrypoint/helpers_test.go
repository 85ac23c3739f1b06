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
