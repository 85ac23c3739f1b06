package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// routerScript is the stand-in router: it prints the SM it was built for,
// its PID (the entrypoint's, since exec keeps it), its arguments and two
// environment variables.
const routerScript = `#!/bin/sh
echo "router for %s pid $$: $*"
echo "JETBAKE_TEST_VAR=$JETBAKE_TEST_VAR"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
`

// newSysroot copies the host testdata/hosts/<host> into a temporary folder,
// installs testdata/nvidia-smi/<host>.sh as /usr/bin/nvidia-smi when there is
// one, adds testdata/images/<image>.json as /etc/jetbake/image.json ("" for
// none) and a stand-in router for each of its targets.
func newSysroot(t testing.TB, host, image string) string {
	t.Helper()
	root := t.TempDir()
	copyTree(t, filepath.Join("testdata", "hosts", host), root)
	if smi, err := os.ReadFile(filepath.Join("testdata", "nvidia-smi", host+".sh")); err == nil {
		writeFile(t, root, "/usr/bin/nvidia-smi", string(smi), 0o755)
	}
	if image == "" {
		return root
	}
	data, err := os.ReadFile(filepath.Join("testdata", "images", image+".json"))
	require.NoError(t, err)
	writeFile(t, root, imagespec.Path, string(data), 0o644)
	spec, err := imagespec.Parse(data)
	require.NoError(t, err)
	for _, tg := range spec.Targets {
		sm := "sm_" + strings.ReplaceAll(tg.SM, ".", "")
		writeFile(t, root, tg.Path, strings.Replace(routerScript, "%s", sm, 1), 0o755)
	}
	return root
}

// writeFile writes content at the absolute path p under root.
func writeFile(t testing.TB, root, p, content string, mode fs.FileMode) {
	t.Helper()
	full := filepath.Join(root, p)
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte(content), mode))
}

// copyTree copies the regular files and folders of src into dst, keeping modes.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	require.NoError(t, err)
}

// baseEnv is the environment of every test run: a PATH whose folders lie
// under the sysroot, no probe unless a test sets one, and a marker variable;
// extra entries replace those of the same name.
func baseEnv(root string, extra ...string) []string {
	env := environ{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"JETBAKE_SYSROOT=" + root,
		"JETBAKE_CUDAPROBE=/nonexistent/jetbake-cudaprobe",
		"JETBAKE_TEST_VAR=kept",
	}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env = env.with(k, v)
	}
	return env
}

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
	code := run(context.Background(), args, baseEnv(root, extra...), &stdout, &stderr, fake)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String(), exec: call}
}

// binaries are the programs the tests build once: the entrypoint and the
// probe side by side, a fake libcuda.so.1 and CUDA's stub of it.
type binaries struct {
	dir, entrypoint, probe, libcuda, stub string
}

var (
	buildOnce sync.Once
	built     binaries
	buildErr  error
)

// buildBinaries builds the entrypoint and jetbake-cudaprobe (CGO_ENABLED=0,
// as released) into one folder, and the fake driver from
// builder/internal/standin/cuda/libcuda.c with gcc.
func buildBinaries(t testing.TB) binaries {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "jetbake-entrypoint-test-")
		if err != nil {
			buildErr = err
			return
		}
		built = binaries{
			dir:        dir,
			entrypoint: filepath.Join(dir, "jetbake-entrypoint"),
			probe:      filepath.Join(dir, probeName),
			libcuda:    filepath.Join(dir, host.LibcudaName),
			stub:       filepath.Join(dir, "stub-"+host.LibcudaName),
		}
		buildErr = buildAll(built)
	})
	require.NoError(t, buildErr)
	return built
}

// buildAll runs the four builds.
func buildAll(b binaries) error {
	steps := [][]string{
		{"go", "build", "-o", b.entrypoint, "."},
		{"go", "build", "-o", b.probe, "./cudaprobe"},
		{"gcc", "-shared", "-fPIC", "-o", b.libcuda, "../builder/internal/standin/cuda/libcuda.c"},
		{"gcc", "-shared", "-fPIC", "-DJB_STUB", "-o", b.stub, "../builder/internal/standin/cuda/libcuda.c"},
	}
	for _, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return &buildError{cmd: strings.Join(s, " "), out: string(out), err: err}
		}
	}
	return nil
}

// buildError is a failed build step with its output.
type buildError struct {
	cmd, out string
	err      error
}

func (e *buildError) Error() string { return e.cmd + ": " + e.err.Error() + "\n" + e.out }

// TestMain removes the built binaries after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// installLibcuda copies the fake driver into the sysroot at dir.
func installLibcuda(t testing.TB, root, dir string) {
	t.Helper()
	b := buildBinaries(t)
	data, err := os.ReadFile(b.libcuda)
	require.NoError(t, err)
	writeFile(t, root, filepath.Join(dir, host.LibcudaName), string(data), 0o755)
}
