package tei

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildImage lays out under a folder what a CUDA devel image has after
// Dockerfile-jetson's apt-get step, and returns a Host for it.
func buildImage(t *testing.T, env map[string]string) Host {
	t.Helper()
	root := t.TempDir()
	for _, f := range []string{
		"/usr/lib/aarch64-linux-gnu/libssl.so", "/usr/lib/aarch64-linux-gnu/libcrypto.so",
		"/usr/lib/aarch64-linux-gnu/pkgconfig/openssl.pc", "/usr/local/cuda/include/cuda.h",
	} {
		writeFile(t, filepath.Join(root, f), "")
	}
	for _, mode := range []string{LinkStatic, LinkDynamic} {
		cuda := linkLibs(mode, true)
		for _, lib := range cuda {
			writeFile(t, filepath.Join(root, "/usr/local/cuda/lib64", lib), "")
		}
	}
	if env == nil {
		env = map[string]string{}
	}
	return Host{Root: root, Env: envOf(env), CPU: []string{"asimd", "fp", "sve"},
		LookPath: func(name string) (string, error) {
			if name == "cc" || name == "pkg-config" || name == "nvcc" {
				return "/usr/bin/" + name, nil
			}
			return "", errors.New("not found")
		},
		Output: nvccOf(anyNVCC)}
}

// anyNVCC lists every SM the tests build for, as no one CUDA release does.
const anyNVCC = "sm_72\nsm_87\nsm_90a\nsm_110\n"

// nvccOf answers `nvcc --list-gpu-code` with list.
func nvccOf(list string) func(string, ...string) ([]byte, error) {
	return func(name string, args ...string) ([]byte, error) {
		if name == "nvcc" && len(args) == 1 && args[0] == "--list-gpu-code" {
			return []byte(list), nil
		}
		return nil, errors.New("unexpected command")
	}
}

// copySource copies the TEI-shaped tree, which the build may change.
func copySource(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.CopyFS(dir, os.DirFS(teiSource)))
	return dir
}

func args(t *testing.T, a ...string) BuildArgs {
	t.Helper()
	b, err := ParseBuildArgs(a)
	require.NoError(t, err)
	return b
}

// Dockerfile-jetson's cargo line on the TEI-shaped tree, without its .cargo folder.
func TestBuildAsDockerfileJetson(t *testing.T) {
	src := copySource(t)
	require.NoError(t, os.RemoveAll(filepath.Join(src, ".cargo")))
	h := buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": "87", "GIT_SHA": "06670157"})
	p, err := Build(src, args(t, "--release", "--bin", "text-embeddings-router", "-F", "candle-cuda", "-F", "static-linking", "-F", "http", "--no-default-features"), h)
	require.NoError(t, err)
	f := p.Facts
	require.Equal(t, filepath.Join(src, "target", "release", "text-embeddings-router"), p.Output)
	require.Equal(t, "text-embeddings-router v1.9.3 ("+filepath.Join(src, "router")+")", p.Package)
	require.Equal(t, "1.9.3", f.Version)
	require.Equal(t, LinkStatic, f.Linking)
	require.True(t, f.CUDA)
	require.Equal(t, 87, f.ComputeCap)
	require.False(t, f.Table.Accepts(87, 87), "upstream's table, unpatched")
	require.Equal(t, "06670157", f.GitSHA)
	require.Equal(t, "generic", f.TargetCPU)
	require.Equal(t, []string{"asimd", "fp"}, f.CPUFeatures)
	require.Equal(t, []string{}, f.Rustflags)
	require.Equal(t, []string{"candle-cuda", "static-linking", "http"}, f.Requested)
}

// The failures of a real build, each in the real tool's words.
func TestBuildFailsAsCargoDoes(t *testing.T) {
	base := []string{"--release", "--bin", "text-embeddings-router", "--no-default-features", "-F", "http"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		host func(*Host)
		want []string
	}{
		{name: "no linking mode (TEI #709)", args: append(base, "-F", "candle-cuda"), env: map[string]string{"CUDA_COMPUTE_CAP": "87"},
			want: []string{"failed to run custom build command for `cudarc v0.13.5 (https://github.com/Narsil/cudarc?rev=8b4f18b4bcd5e4b1a9daf40abc3a2e27f83f06e9#8b4f18b4)`",
				"(exit status: 101)", "None between 'dynamic-loading', 'dynamic-linking' and 'static-linking' features are active, this is a bug"}},
		{name: "no CUDA_COMPUTE_CAP", args: append(base, "-F", "candle-cuda", "-F", "static-linking"),
			want: []string{"environment variable `CUDA_COMPUTE_CAP` not defined at compile time", "could not compile `text-embeddings-backend-candle` (lib)"}},
		{name: "unknown bin", args: []string{"--release", "--bin", "router"},
			want: []string{"no bin target named `router` in default-run packages", "text-embeddings-router"}},
		{name: "unknown feature", args: append(base, "-F", "candle-cuda,cuda-nope"),
			want: []string{"none of the selected packages contains this feature: cuda-nope"}},
		{name: "no libssl-dev", args: append(base, "-F", "candle-cuda", "-F", "static-linking"), env: map[string]string{"CUDA_COMPUTE_CAP": "87"},
			host: func(h *Host) { _ = os.Remove(filepath.Join(h.Root, "/usr/lib/aarch64-linux-gnu/pkgconfig/openssl.pc")) },
			want: []string{"failed to run custom build command for `openssl-sys v0.9.104`", "Could not find directory of OpenSSL installation"}},
		{name: "no C compiler", args: append(base, "-F", "candle-cuda", "-F", "static-linking"), env: map[string]string{"CUDA_COMPUTE_CAP": "87"},
			host: func(h *Host) {
				look := h.LookPath
				h.LookPath = func(n string) (string, error) {
					if n == "cc" {
						return "", errors.New("no")
					}
					return look(n)
				}
			},
			want: []string{"linker `cc` not found"}},
		{name: "a runtime image as build base: no static CUDA", args: append(base, "-F", "candle-cuda", "-F", "static-linking"), env: map[string]string{"CUDA_COMPUTE_CAP": "87"},
			host: func(h *Host) { _ = os.Remove(filepath.Join(h.Root, "/usr/local/cuda/lib64/libcublas_static.a")) },
			want: []string{"linking with `cc` failed: exit status: 1", "/usr/bin/ld: cannot find -lcublas_static: No such file or directory"}},
		{name: "dynamic linking without cuda.h", args: append(base, "-F", "candle-cuda", "-F", "dynamic-linking"), env: map[string]string{"CUDA_COMPUTE_CAP": "87"},
			host: func(h *Host) { _ = os.Remove(filepath.Join(h.Root, "/usr/local/cuda/include/cuda.h")) },
			want: []string{"Unable to find `include/cuda.h` under any of"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := copySource(t)
			h := buildImage(t, tt.env)
			if tt.host != nil {
				tt.host(&h)
			}
			_, err := Build(src, args(t, tt.args...), h)
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// What the build tunes for: TEI's .cargo/config.toml when it is in the
// source, RUSTFLAGS over it.
func TestBuildRecordsTheTargetCPU(t *testing.T) {
	src := copySource(t)
	a := args(t, "--release", "--bin", "text-embeddings-router", "-F", "candle-cuda-volta", "-F", "dynamic-linking", "-F", "http", "--no-default-features")
	p, err := Build(src, a, buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": "72"}))
	require.NoError(t, err)
	require.Equal(t, "native", p.Facts.TargetCPU)
	require.Equal(t, []string{"asimd", "fp", "sve"}, p.Facts.CPUFeatures, "the building CPU's")
	require.Equal(t, LinkDynamic, p.Facts.Linking)
	require.Contains(t, p.Facts.RustflagsFrom, filepath.Join(src, ".cargo", "config.toml"))

	p, err = Build(src, a, buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": "72", "RUSTFLAGS": "-C target-cpu=cortex-a78ae"}))
	require.NoError(t, err)
	require.Equal(t, "cortex-a78ae", p.Facts.TargetCPU)
	require.NotContains(t, p.Facts.CPUFeatures, "sve")

	cpu, err := Build(src, args(t, "--release", "--bin", "text-embeddings-router", "-F", "http", "--no-default-features"), buildImage(t, nil))
	require.NoError(t, err)
	require.False(t, cpu.Facts.CUDA, "no CUDA backend: no gate, no cudarc")
	require.Empty(t, cpu.Facts.Linking)
	require.Equal(t, "cpu", Template(cpu.Facts.Linking, cpu.Facts.FlashAttn))
}

func TestParseBuildArgs(t *testing.T) {
	b := args(t, "--release", "--bin=x", "-Fa,b", "--features", "c d", "--no-default-features", "--locked", "-j", "2", "--target-dir", "/t")
	require.Equal(t, BuildArgs{Release: true, Bin: "x", TargetDir: "/t", Features: FeatureRequest{Features: []string{"a", "b", "c", "d"}, NoDefault: true}}, b)
	_, err := ParseBuildArgs([]string{"--frobnicate"})
	require.EqualError(t, err, "error: unexpected argument '--frobnicate' found\n\nUsage: cargo build [OPTIONS]\n\nFor more information, try '--help'.")
	_, err = ParseBuildArgs([]string{"--bin"})
	require.ErrorContains(t, err, "a value is required for '--bin <BIN>'")
}
