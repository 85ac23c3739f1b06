package tei

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) Env {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

// The rustflags in effect follow cargo's precedence.
func TestRustflags(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	home := filepath.Join(root, "cargo")
	writeFile(t, filepath.Join(home, "config.toml"), "[build]\nrustflags = [\"-C\", \"debuginfo=0\"]\n")
	none := envOf(map[string]string{"CARGO_HOME": home})

	flags, err := Rustflags(src, none)
	require.NoError(t, err)
	require.Equal(t, []string{"-C", "debuginfo=0"}, flags.Args, "$CARGO_HOME/config.toml")

	// TEI's .cargo/config.toml in the source: target-cpu=native.
	writeFile(t, filepath.Join(src, ".cargo", "config.toml"),
		"[build]\nrustflags = [\"-C\", \"target-cpu=native\"]\n\n[target.wasm32-unknown-unknown]\nrustflags = [\"-C\", \"target-feature=+simd128\"]\n")
	flags, err = Rustflags(filepath.Join(src, "router"), none)
	require.NoError(t, err)
	require.Equal(t, []string{"-C", "debuginfo=0", "-C", "target-cpu=native"}, flags.Args, "arrays joined, the nearer file last; found from a subfolder")
	require.Contains(t, flags.From, "build.rustflags")

	flags, err = Rustflags(src, envOf(map[string]string{"CARGO_HOME": home, "RUSTFLAGS": "-C  target-cpu=generic"}))
	require.NoError(t, err)
	require.Equal(t, Flags{Args: []string{"-C", "target-cpu=generic"}, From: "RUSTFLAGS"}, flags)
	flags, err = Rustflags(src, envOf(map[string]string{"RUSTFLAGS": ""}))
	require.NoError(t, err)
	require.Empty(t, flags.Args, "an empty RUSTFLAGS still wins")
	require.Equal(t, "RUSTFLAGS", flags.From)
	flags, err = Rustflags(src, envOf(map[string]string{"RUSTFLAGS": "-Cfoo", "CARGO_ENCODED_RUSTFLAGS": "-C\x1ftarget-cpu=x"}))
	require.NoError(t, err)
	require.Equal(t, Flags{Args: []string{"-C", "target-cpu=x"}, From: "CARGO_ENCODED_RUSTFLAGS"}, flags)

	writeFile(t, filepath.Join(src, ".cargo", "config.toml"), "[target.aarch64-unknown-linux-gnu]\nrustflags = \"-C target-feature=+sve\"\n[build]\nrustflags = [\"-C\", \"target-cpu=native\"]\n")
	flags, err = Rustflags(src, none)
	require.NoError(t, err)
	require.Equal(t, []string{"-C", "target-feature=+sve"}, flags.Args, "target.<triple>.rustflags over build.rustflags")

	writeFile(t, filepath.Join(src, ".cargo", "config.toml"), "[build]\nrustflags = 3\n")
	_, err = Rustflags(src, none)
	require.ErrorContains(t, err, "expected a string or an array of strings")
	writeFile(t, filepath.Join(src, ".cargo", "config.toml"), "[build\n")
	_, err = Rustflags(src, none)
	require.ErrorContains(t, err, "could not parse TOML configuration")
}

func TestTargetCPU(t *testing.T) {
	qemu := []string{"asimd", "cpuid", "evtstrm", "fp", "sve", "sve2"}
	require.Equal(t, CPUTarget{CPU: "generic", Features: []string{"asimd", "fp"}}, TargetCPU(nil, qemu))
	native := TargetCPU([]string{"-C", "target-cpu=native"}, qemu)
	require.Equal(t, []string{"asimd", "fp", "sve", "sve2"}, native.Features, "the building CPU's, without evtstrm and cpuid")
	orin := TargetCPU([]string{"-Ctarget-cpu=cortex-a78ae"}, qemu)
	require.Contains(t, orin.Features, "asimddp")
	require.NotContains(t, orin.Features, "sve")
	unknown := TargetCPU([]string{"--codegen", "target-cpu=pentium"}, qemu)
	require.Equal(t, []string{"asimd", "fp"}, unknown.Features)
	require.Equal(t, []string{"'pentium' is not a recognized processor for this target (ignoring processor)"}, unknown.Warnings)
	feat := TargetCPU([]string{"-C", "target-cpu=native", "-C", "target-feature=-sve2,+i8mm,+bogus"}, qemu)
	require.Equal(t, []string{"asimd", "fp", "i8mm", "sve"}, feat.Features)
	require.Equal(t, []string{"unknown and unstable feature specified for `-Ctarget-feature`: `bogus`"}, feat.Warnings)
	require.Equal(t, []string{"a", "b"}, Codegen([]string{"-C", "x=a", "--codegen=x=b", "-Cy=c"}, "x"))
}
