package standin

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// crossKit is realKit with Debian's amd64 cross compiler.
func crossKit(t *testing.T) Kit {
	t.Helper()
	k := realKit(t)
	k.Cross = filepath.Join(k.Source, "bin", "deps", "cross-amd64")
	_, err := os.Stat(filepath.Join(k.Cross, "usr", "bin", "aarch64-linux-gnu-gcc"))
	require.NoError(t, err, "run 'make deps' as root: it fetches Debian's amd64 aarch64 cross compiler")
	return k
}

// jetpack62 is JetPack 6.2's release as the shipped matrix has it.
var jetpack62 = plan.Release{Name: "jetpack6.2", JetPack: "6.2", L4T: "36.4.3", CUDA: "12.6", Ubuntu: "22.04"}

// crossRun is the shipped Dockerfile's toolchain-cross RUN lines and the
// router stage's cargo line, as the cross path runs them.
const crossRun = `cuda="$(readlink -f /usr/local/cuda)" && rm -f "${cuda}/lib64" && ln -s "targets/${CUDA_TARGET_DIR}/lib" "${cuda}/lib64" && ` +
	`cd /src && curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain none && ` +
	`rustup toolchain install && rustup target add "${CARGO_BUILD_TARGET}" && ` +
	`cargo install sccache --locked --version 0.10.0 --no-default-features --features s3,gha && ` +
	`RUSTC_WRAPPER=sccache SCCACHE_DIR=/sccache CUDA_COMPUTE_CAP=87 cargo build --release --bin text-embeddings-router ` +
	`-F candle-cuda -F static-linking -F http --no-default-features`

// crossBuildIn runs crossRun in the unpacked cross base at root, with the
// toolchain-cross stage's variables, on a copy of the stand-in TEI source.
func crossBuildIn(t *testing.T, root string) (string, int) {
	t.Helper()
	require.NoError(t, os.CopyFS(filepath.Join(root, "src"), os.DirFS("../../../testdata/tei-source")))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "src", ".cargo")))
	env := []string{"RUSTUP_HOME=/usr/local/rustup", "CARGO_HOME=/usr/local/cargo",
		"PATH=/usr/local/cargo/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	for k, v := range crossEnv(t) {
		env = append(env, k+"="+v)
	}
	// The stage's ARG CUDA_TARGET_DIR, as jetbake passes it for the
	// base's line.
	dir := "aarch64-linux"
	if _, err := os.Stat(filepath.Join(root, "usr/local/cuda/targets/sbsa-linux")); err == nil {
		dir = "sbsa-linux"
	}
	env = append(env, "CUDA_TARGET_DIR="+dir)
	sort.Strings(env)
	mountBuildDirs(t, root)
	return inImage(t, root, crossRun, env...)
}

// mountBuildDirs mounts what a build's container has under root until the
// test ends: /proc (sccache finds itself through /proc/self/exe) and /dev
// (cargo gives rustc /dev/null as stdin).
func mountBuildDirs(t *testing.T, root string) {
	t.Helper()
	for _, m := range [][]string{{"-t", "proc", "proc", "proc"}, {"--bind", "/dev", "dev"}} {
		at := filepath.Join(root, m[len(m)-1])
		require.NoError(t, os.MkdirAll(at, 0o755))
		require.NoError(t, exec.Command("mount", append(m[:len(m)-1], at)...).Run())
		t.Cleanup(func() { require.NoError(t, exec.Command("umount", at).Run()) })
	}
}

// The stand-in cross build base is a linux/amd64 image in which the cross
// path, run as the shipped Dockerfile runs it, writes an aarch64 router:
// Debian's real cross gcc, an x86_64 program in the image, compiles
// nvcc's host object and links it.
func TestStandinCrossBase(t *testing.T) {
	k := crossKit(t)
	b := crossBase(CrossBaseRef("127.0.0.1:5000", jetpack62), jetpack62)
	require.Equal(t, "127.0.0.1:5000/jetbake/cross-build-base:cuda12.6-aarch64-linux-ubuntu22.04", b.Ref)
	img, err := k.Image(t.Context(), b)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, "linux/amd64", cf.OS+"/"+cf.Architecture)

	root := unpacked(t, k, b)
	require.Equal(t, elf.EM_X86_64, machineOf(t, filepath.Join(root, "usr/bin/aarch64-linux-gnu-gcc-11")), "Debian's cross gcc is an x86_64 program")
	out, code := crossBuildIn(t, root)
	require.Equal(t, 0, code, out)
	router := filepath.Join(root, "src/target", tei.Triple, "release/text-embeddings-router")
	require.Equal(t, elf.EM_AARCH64, machineOf(t, router), out)
	objs, err := filepath.Glob(filepath.Join(root, "src/target", tei.Triple, "release/build/*/out/flash_api-*.o"))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	require.Equal(t, elf.EM_AARCH64, machineOf(t, objs[0]), "nvcc's host object, through -ccbin aarch64-linux-gnu-gcc")
	require.True(t, strings.Contains(out, "installing component 'rust-std' for 'aarch64-unknown-linux-gnu'"), out)
	checkRealNvccRouter(t, k, root, router, 87, "aarch64-linux-gnu-gcc")
}

// checkRealNvccRouter holds a router that a cross base with NVIDIA's nvcc
// built for sm against nvcc's own answers and cuobjdump: the base's nvcc
// is NVIDIA's 11.8; the router's .nv_fatbin holds, as cuobjdump lists it,
// the sm cubin and (compressed) PTX nvcc made of each of the stand-in
// candle-flash-attn's two kernel files, one fat binary each, in the
// archive's order, and no module of the template's is left.
func checkRealNvccRouter(t *testing.T, k Kit, root, router string, sm int, ccbin string) {
	t.Helper()
	out, code := inImage(t, root, "/usr/local/cuda/bin/nvcc --version && /usr/local/cuda/bin/nvcc --list-gpu-code")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "Cuda compilation tools, release 11.8, V11.8.89")
	require.Contains(t, out, "sm_72\nsm_75\nsm_80\nsm_86\nsm_87\n")
	require.NotContains(t, out, "jetbake stand-in")
	// nvcc's own refusals of Thor's SM, whose words imagebuild's
	// buildfailure.CompilerRefusal reads.
	for args, want := range map[string]string{
		"--gpu-architecture=sm_110":             "nvcc fatal   : Value 'sm_110' is not defined for option 'gpu-architecture'",
		"-gencode arch=compute_110,code=sm_110": "nvcc fatal   : Unsupported gpu architecture 'compute_110'",
	} {
		out, code := inImage(t, root, "cd /tmp && echo '__global__ void k(){}' > k.cu && /usr/local/cuda/bin/nvcc -ccbin "+ccbin+" -c "+args+" k.cu")
		require.Equal(t, 1, code, out)
		require.Contains(t, out, want)
	}

	p, err := nvreal.Find(k.Source)
	require.NoError(t, err)
	cmp, err := p.Compare(t.Context(), router, t.TempDir())
	require.NoError(t, err)
	require.True(t, cmp.Agrees(), "jetbake %s; cuobjdump %s; %v", cmp.Jetbake, cmp.Cuobjdump, cmp.ModuleFaults)
	// The kernels' module comes first in the template (routerKernels), the
	// static CUDA libraries' after it.
	name := fmt.Sprintf("sm_%d", sm)
	require.GreaterOrEqual(t, len(cmp.Cuobjdump), 4)
	require.Equal(t, strings.Repeat(name+" cubin, "+name+" PTX, ", 2), cmp.Cuobjdump[:4].String()+", ", "nvcc's cubin and PTX of each kernel file")
	require.NotContains(t, cmp.Cuobjdump.String(), tei.PlaceholderSM().SM(), "no module of the template's is left")
}

// A cross build base with the build machine's OpenSSL (libssl-dev, not
// libssl-dev:arm64): pkg-config answers the x86_64 folder (PKG_CONFIG_PATH
// adds to its search path), and the real aarch64 linker refuses the
// x86_64 libraries in its own words.
func TestStandinCrossBaseHostSSL(t *testing.T) {
	k := crossKit(t)
	b := crossBase(CrossBaseRef("127.0.0.1:5000", jetpack62), jetpack62)
	b.HostSSL = true
	root := unpacked(t, k, b)
	require.Equal(t, elf.EM_X86_64, machineOf(t, filepath.Join(root, "usr/lib/x86_64-linux-gnu/libssl.so.3")))
	require.NoFileExists(t, filepath.Join(root, "usr/lib/aarch64-linux-gnu/libssl.so"))
	out, code := crossBuildIn(t, root)
	require.Equal(t, 101, code, out)
	for _, w := range []string{"error: linking with `aarch64-linux-gnu-gcc` failed: exit status: 1",
		"ld: skipping incompatible /usr/lib/x86_64-linux-gnu/libssl.so when searching for -lssl",
		"ld: cannot find -lssl: No such file or directory", "collect2: error: ld returned 1 exit status"} {
		require.Contains(t, out, w)
	}
	require.NoFileExists(t, filepath.Join(root, "src/target", tei.Triple, "release/text-embeddings-router"))
	t.Log(out)
}

// AddCrossBases gives every release of the shipped matrix a cross base
// that `jetbake validate`'s rules accept, and ForPlan lists one stand-in
// cross base per (CUDA, target folder, Ubuntu), amd64.
func TestAddCrossBases(t *testing.T) {
	data, err := os.ReadFile("../../../matrix.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	require.NoError(t, AddCrossBases(m, "127.0.0.1:5000"))
	data, err = json.Marshal(m)
	require.NoError(t, err)
	parsed, err := matrix.Parse(data)
	require.NoError(t, err)
	p, err := plan.New(parsed)
	require.NoError(t, err)
	var cross []string
	for _, b := range ForPlan(p) {
		if b.Cross {
			require.Equal(t, "amd64", b.Platform().Architecture)
			require.True(t, b.Devel)
			cross = append(cross, b.Ref)
		}
	}
	require.Equal(t, []string{
		"127.0.0.1:5000/jetbake/cross-build-base:cuda11.4-aarch64-linux-ubuntu20.04",
		"127.0.0.1:5000/jetbake/cross-build-base:cuda12.6-aarch64-linux-ubuntu22.04",
		"127.0.0.1:5000/jetbake/cross-build-base:cuda13.0-sbsa-linux-ubuntu24.04",
		"127.0.0.1:5000/jetbake/cross-build-base:cuda13.2-sbsa-linux-ubuntu24.04",
	}, cross)
	for _, rel := range p.Releases {
		require.Equal(t, CrossBaseRef("127.0.0.1:5000", rel), rel.CrossBuildBase, rel.Name)
	}
	require.NoError(t, AddCrossBases(map[string]any{"app": map[string]any{}}, "127.0.0.1:5000"), "an app matrix has no cross bases")
	// The rules do read them: a Tegra release with the SBSA folder is refused.
	m["releases"].([]any)[1].(map[string]any)["cross_build_base"].(map[string]any)["cuda_target"] = "sbsa-linux"
	data, err = json.Marshal(m)
	require.NoError(t, err)
	_, err = matrix.Parse(data)
	require.ErrorContains(t, err, "cuda_target")
}
