package standin

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/standin/tei"
)

// crossImage lays out under a folder what a cross build base has after
// the cross path's apt-get step on an x86_64 machine: the target's OpenSSL
// (libssl-dev:arm64), the CUDA tree with the stand-in nvcc of an x86_64
// toolkit and the target's folder (targets/aarch64-linux), rustc's
// stand-in aarch64 object, and rustup's toolchain with the aarch64
// standard library when addTarget. The host's own gcc (x86_64) and
// Debian's aarch64-linux-gnu-gcc are the machine's.
func crossImage(t *testing.T, addTarget bool, env map[string]string) tei.Host {
	t.Helper()
	root := t.TempDir()
	write := func(p string, data []byte, mode os.FileMode) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), data, mode))
	}
	for _, f := range []string{"/usr/lib/aarch64-linux-gnu/pkgconfig/openssl.pc", "/usr/local/cuda/include/cuda.h"} {
		write(f, nil, 0o644)
	}
	// libssl-dev:arm64's links, which the real linker reads.
	for _, so := range []string{"libssl.so.3", "libcrypto.so.3"} {
		lib, err := BuildSharedObject(t.Context(), t.TempDir(), ARM64, so)
		require.NoError(t, err)
		data, err := os.ReadFile(lib)
		require.NoError(t, err)
		write("/usr/lib/aarch64-linux-gnu/"+strings.Split(so, ".")[0]+".so", data, 0o644)
	}
	for _, lib := range []string{"stubs/libcuda.so", "libcudart_static.a", "libcublas_static.a", "libcublasLt_static.a",
		"libcurand_static.a", "libculibos.a", "libcudart.so"} {
		write("/usr/local/cuda/lib64/"+lib, nil, 0o644)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "/usr/local/cuda/targets/aarch64-linux/lib"), 0o755))
	nvcc, err := nvccScript("12.6", "x86_64-linux")
	require.NoError(t, err)
	write("/usr/local/cuda/bin/nvcc", nvcc, 0o755)
	main, err := BuildRustcObject(t.Context(), t.TempDir())
	require.NoError(t, err)
	data, err := os.ReadFile(main)
	require.NoError(t, err)
	write(tei.MainObjectPath(), data, 0o644)
	rustup := filepath.Join(root, "usr/local/rustup")
	require.NoError(t, os.MkdirAll(filepath.Join(rustup, "toolchains/1.92.0-x86_64-unknown-linux-gnu/lib/rustlib/x86_64-unknown-linux-gnu"), 0o755))
	if addTarget {
		require.NoError(t, os.MkdirAll(filepath.Join(rustup, "toolchains/1.92.0-x86_64-unknown-linux-gnu/lib/rustlib", tei.Triple), 0o755))
	}
	all := map[string]string{"RUSTUP_HOME": "/usr/local/rustup", "CUDA_COMPUTE_CAP": "87"}
	for k, v := range env {
		all[k] = v
	}
	environ := os.Environ()
	for k, v := range all {
		environ = append(environ, k+"="+v)
	}
	// nvcc is the image's; the compilers and linkers the machine's.
	path := func(name string) (string, error) {
		if name == "nvcc" {
			return filepath.Join(root, "/usr/local/cuda/bin/nvcc"), nil
		}
		return exec.LookPath(name)
	}
	run := func(stdout bool) func(string, string, ...string) ([]byte, error) {
		return func(dir, name string, args ...string) ([]byte, error) {
			p, err := path(name)
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(p, args...)
			cmd.Env = environ
			if dir != "" {
				cmd.Dir = filepath.Join(root, dir)
			}
			if stdout {
				return cmd.Output()
			}
			return cmd.CombinedOutput()
		}
	}
	output := func(name string, args ...string) ([]byte, error) { return run(true)("", name, args...) }
	return tei.Host{Root: root, Arch: "amd64", CPU: []string{"fp", "asimd"}, LookPath: path, Output: output, Run: run(false),
		Env: func(k string) (string, bool) { v, ok := all[k]; return v, ok }}
}

func crossSource(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../../testdata/tei-source")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, ".cargo")))
	return dir
}

// crossArgs is the cross path's cargo line.
var crossArgs = []string{"--release", "--bin", "text-embeddings-router",
	"-F", "candle-cuda", "-F", "static-linking", "-F", "http", "--no-default-features"}

// crossEnv is what the shipped Dockerfile-jetson's toolchain-cross stage
// sets for TEI's build (its ENV lines, ${CUDA_TARGET_DIR} at its default),
// less what only places the toolchain.
func crossEnv(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../../../dockerfiles/Dockerfile-jetson")
	require.NoError(t, err)
	defer f.Close()
	ast, err := parser.Parse(f)
	require.NoError(t, err)
	stages, _, err := instructions.Parse(ast.AST, nil)
	require.NoError(t, err)
	i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == "toolchain-cross" })
	require.GreaterOrEqual(t, i, 0, "Dockerfile-jetson has a toolchain-cross stage")
	args, env := map[string]string{}, map[string]string{}
	for _, c := range stages[i].Commands {
		switch c := c.(type) {
		case *instructions.ArgCommand:
			for _, kv := range c.Args {
				if kv.Value != nil {
					args[kv.Key] = *kv.Value
				}
			}
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				v := kv.Value
				for k, a := range args {
					v = strings.ReplaceAll(v, "${"+k+"}", a)
				}
				env[kv.Key] = strings.Trim(v, `"`)
			}
		}
	}
	for _, k := range []string{"DEBIAN_FRONTEND", "RUSTUP_HOME", "CARGO_HOME", "PATH"} {
		delete(env, k)
	}
	require.Equal(t, tei.Triple, env["CARGO_BUILD_TARGET"])
	return env
}

func machineOf(t *testing.T, path string) elf.Machine {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	return f.Machine
}

// The cross path as the router stage runs it, with the shipped
// Dockerfile's variables: cargo builds for CARGO_BUILD_TARGET (or
// --target) with the target's linker, nvcc with the aarch64 host compiler
// and the target's folder. The host object is a real aarch64 object from
// Debian's cross gcc, linked with rustc's by the real cross linker.
func TestStandinCrossBuild(t *testing.T) {
	byFlag := without(crossEnv(t), "CARGO_BUILD_TARGET")
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"CARGO_BUILD_TARGET": {env: crossEnv(t), args: crossArgs},
		"--target":           {env: byFlag, args: append([]string{"--target", tei.Triple}, crossArgs...)},
	} {
		t.Run(name, func(t *testing.T) {
			src := crossSource(t)
			parsed, err := tei.ParseBuildArgs(tc.args)
			require.NoError(t, err)
			p, err := tei.Build(src, parsed, crossImage(t, true, tc.env))
			require.NoError(t, err)
			require.Equal(t, filepath.Join(src, "target", tei.Triple, "release", "text-embeddings-router"), p.Output,
				"cargo writes under target/TRIPLE")
			require.True(t, p.Facts.FlashAttn)
			objs, err := filepath.Glob(filepath.Join(src, "target", tei.Triple, "release", "build", "*", "out", "flash_api-*.o"))
			require.NoError(t, err)
			require.Len(t, objs, 1, "bindgen_cuda's build_lib: one object per kernel in OUT_DIR")
			require.Equal(t, elf.EM_AARCH64, machineOf(t, objs[0]), "nvcc -ccbin aarch64-linux-gnu-gcc writes an aarch64 host object")
		})
	}
}

// without is env less key.
func without(env map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// Each part of the contract left out fails the build as the real tools do;
// the wrong-architecture host object with ld's own words.
func TestStandinCrossBuildFails(t *testing.T) {
	env := crossEnv(t)
	tests := []struct {
		name      string
		env       map[string]string
		noTarget  bool
		want      []string
		wantMatch elf.Machine
	}{
		{name: "no target on an x86_64 machine", env: without(env, "CARGO_BUILD_TARGET"),
			want: []string{"builds TEI's router for aarch64-unknown-linux-gnu only, not x86_64-unknown-linux-gnu", "pass --target aarch64-unknown-linux-gnu"}},
		{name: "the target's standard library not installed", env: env, noTarget: true,
			want: []string{"error[E0463]: can't find crate for `core`", "rustup target add aarch64-unknown-linux-gnu"}},
		{name: "no linker variable: the host's cc links aarch64 objects", env: without(env, tei.LinkerVar(tei.Triple)),
			want: []string{"error: linking with `cc` failed: exit status: 1", "Relocations in generic ELF (EM: 183)", "file in wrong format"}},
		{name: "no NVCC_CCBIN: nvcc's gcc writes an x86_64 host object", env: without(without(env, "NVCC_CCBIN"), "NVCC_PREPEND_FLAGS"),
			want: []string{"error: linking with `aarch64-linux-gnu-gcc` failed: exit status: 1",
				"skipping incompatible", "/libflashattention.a when searching for -lflashattention", "cannot find -lflashattention",
				"collect2: error: ld returned 1 exit status"},
			wantMatch: elf.EM_X86_64},
		{name: "no target directory: nvcc looks for the host's", env: without(env, "NVCC_APPEND_FLAGS"),
			want: []string{"nvcc error while executing compiling", "nvcc fatal   : Could not find target directory", "targets/x86_64-linux"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := crossSource(t)
			parsed, err := tei.ParseBuildArgs(crossArgs)
			require.NoError(t, err)
			_, err = tei.Build(src, parsed, crossImage(t, !tt.noTarget, tt.env))
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
			if tt.wantMatch != elf.EM_NONE {
				objs, _ := filepath.Glob(filepath.Join(src, "target", tei.Triple, "release", "build", "*", "out", "flash_api-*.o"))
				require.Len(t, objs, 1)
				require.Equal(t, tt.wantMatch, machineOf(t, objs[0]))
			}
			t.Log(strings.TrimSpace(err.Error()))
		})
	}
}
