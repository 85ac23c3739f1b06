// Package eptest holds what the tests of jetbake-entrypoint, jetbake-probe
// and package detect share: sysroots made from entrypoint/testdata, the
// environment of a test run, and the binaries built once per test binary
// (the entrypoint, jetbake-cudaprobe and jetbake-probe side by side, and
// the stand-in libcuda.so.1). Only tests import it.
package eptest

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/cctest"
	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// RouterScript is the stand-in router: it prints the SM it was built for
// (%s), its PID (the entrypoint's, since exec keeps it), its arguments and
// two environment variables.
const RouterScript = `#!/bin/sh
echo "router for %s pid $$: $*"
echo "JETBAKE_TEST_VAR=$JETBAKE_TEST_VAR"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
`

// RepoPath is a path in the repository, found from the working folder
// (a package's folder under go test) up to go.mod.
func RepoPath(elem ...string) string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(append([]string{dir}, elem...)...)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("eptest: no go.mod above the working folder")
		}
		dir = parent
	}
}

// Testdata is a path under entrypoint/testdata.
func Testdata(elem ...string) string {
	return RepoPath(append([]string{"entrypoint", "testdata"}, elem...)...)
}

// NewSysroot copies the host testdata/hosts/<hostName> into a temporary
// folder, installs testdata/nvidia-smi/<hostName>.sh as /usr/bin/nvidia-smi
// when there is one, adds testdata/images/<image>.json as
// /etc/jetbake/image.json ("" for none) and a stand-in router for each of
// its targets.
func NewSysroot(t testing.TB, hostName, image string) string {
	t.Helper()
	root := t.TempDir()
	CopyTree(t, Testdata("hosts", hostName), root)
	if smi, err := os.ReadFile(Testdata("nvidia-smi", hostName+".sh")); err == nil {
		WriteFile(t, root, "/usr/bin/nvidia-smi", string(smi), 0o755)
	}
	if image == "" {
		return root
	}
	data, err := os.ReadFile(Testdata("images", image+".json"))
	require.NoError(t, err)
	WriteFile(t, root, imagespec.Path, string(data), 0o644)
	spec, err := imagespec.Parse(data)
	require.NoError(t, err)
	for _, tg := range spec.Targets {
		sm := "sm_" + strings.ReplaceAll(tg.SM, ".", "")
		WriteFile(t, root, tg.Path, strings.Replace(RouterScript, "%s", sm, 1), 0o755)
	}
	return root
}

// WriteFile writes content at the absolute path p under root.
func WriteFile(t testing.TB, root, p, content string, mode fs.FileMode) {
	t.Helper()
	full := filepath.Join(root, p)
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte(content), mode))
}

// CopyTree copies the regular files and folders of src into dst, keeping modes.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	require.NoError(t, walkTree(src, dst, false))
}

// walkTree recreates src under dst: folders made, regular files copied
// with their modes or, with link, hard-linked (copied when dst is on
// another file system) and symbolic links kept as links.
func walkTree(src, dst string, link bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case link && d.Type()&fs.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(to, target)
		case link && os.Link(p, target) == nil:
			return nil
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
}

// BaseEnv is the environment of every test run: a PATH whose folders lie
// under the sysroot, no CUDA probe unless a test sets one, and a marker
// variable; extra entries replace those of the same name.
func BaseEnv(root string, extra ...string) []string {
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"JETBAKE_SYSROOT=" + root,
		"JETBAKE_CUDAPROBE=/nonexistent/jetbake-cudaprobe",
		"JETBAKE_TEST_VAR=kept",
	}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		env = append(slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") }), kv)
	}
	return env
}

// Binaries are the programs the tests build once: the entrypoint,
// jetbake-cudaprobe and jetbake-probe side by side in Dir, a fake
// libcuda.so.1 and CUDA's stub of it.
type Binaries struct {
	Dir, Entrypoint, CUDAProbe, Probe, Libcuda, Stub string
}

// onceBuild is a set of binaries built once per test binary.
type onceBuild struct {
	once sync.Once
	b    Binaries
	err  error
}

// get builds the set with build the first time, and fails t when that
// failed.
func (o *onceBuild) get(t testing.TB, build func() (Binaries, error)) Binaries {
	t.Helper()
	o.once.Do(func() { o.b, o.err = build() })
	require.NoError(t, o.err)
	return o.b
}

// hostSet and arm64Set are the sets Build (for this machine) and
// BuildARM64 make.
var hostSet, arm64Set onceBuild

// Build builds the three binaries (CGO_ENABLED=0, as released) into one
// folder, and the fake driver from builder/internal/standin/cuda/libcuda.c
// with gcc, once per test binary; Main removes them.
func Build(t testing.TB) Binaries {
	t.Helper()
	return hostSet.get(t, func() (Binaries, error) {
		libcuda := RepoPath("builder", "internal", "standin", "cuda", "libcuda.c")
		return buildSet("jetbake-entrypoint-test-", runtime.GOARCH, func(b *Binaries) [][]string {
			b.Libcuda, b.Stub = filepath.Join(b.Dir, host.LibcudaName), filepath.Join(b.Dir, "stub-"+host.LibcudaName)
			return [][]string{
				{"gcc", "-shared", "-fPIC", "-o", b.Libcuda, libcuda},
				{"gcc", "-shared", "-fPIC", "-DJB_STUB", "-o", b.Stub, libcuda},
			}
		})
	})
}

// buildSet builds the entrypoint, jetbake-cudaprobe and jetbake-probe for
// linux/goarch (CGO_ENABLED=0, as released) into a new temporary folder
// named with prefix, then runs the steps more returns.
func buildSet(prefix, goarch string, more func(b *Binaries) [][]string) (Binaries, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{Dir: dir, Entrypoint: filepath.Join(dir, "jetbake-entrypoint"),
		CUDAProbe: filepath.Join(dir, "jetbake-cudaprobe"), Probe: filepath.Join(dir, "jetbake-probe")}
	const mod = "github.com/jetbake/jetbake/entrypoint"
	steps := [][]string{
		{"go", "build", "-o", b.Entrypoint, mod},
		{"go", "build", "-o", b.CUDAProbe, mod + "/cudaprobe"},
		{"go", "build", "-o", b.Probe, mod + "/probe"},
	}
	if err := RunSteps(steps, "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch); err != nil {
		return b, err
	}
	return b, RunSteps(more(&b), "CGO_ENABLED=0")
}

// RunSteps runs each command with the environment and env added, and
// stops at the first that fails, with its output.
func RunSteps(steps [][]string, env ...string) error {
	for _, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return errors.New(strings.Join(s, " ") + ": " + err.Error() + "\n" + string(out))
		}
	}
	return nil
}

// Main runs the tests of a package that uses Build, then removes what
// Build built: a package's TestMain calls it.
func Main(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{hostSet.b.Dir, arm64Set.b.Dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// InstallLibcuda copies the fake driver into the sysroot at dir.
func InstallLibcuda(t testing.TB, root, dir string) {
	t.Helper()
	data, err := os.ReadFile(Build(t).Libcuda)
	require.NoError(t, err)
	WriteFile(t, root, filepath.Join(dir, host.LibcudaName), string(data), 0o755)
}

// FutureSysroot is a host of computecap/cctest's fictional future Jetson
// (soc_id 41, only rows of a table) with the stand-in libcuda.so.1, and a
// JetPack 8.0 image with binaries for SM 8.7 and 12.5.
func FutureSysroot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	WriteFile(t, root, host.SocIDPath, "41\n", 0o644)
	WriteFile(t, root, host.SocFamilyPath, "Tegra\n", 0o644)
	WriteFile(t, root, host.SocMachinePath, cctest.FutureMachine+"\n", 0o644)
	WriteFile(t, root, host.TegraReleasePath, StandinRelease(cctest.FutureL4T), 0o644)
	WriteFile(t, root, imagespec.Path, `{"schema_version": 1, "router": "text-embeddings-router", "version": "1.8.2",
		"release": "jetpack8.0", "jetpack": "8.0", "l4t": "40.1.0", "cuda": "14.0",
		"tags": ["ghcr.io/jetbake/text-embeddings-router:1.8.2-jetpack8.0"],
		"targets": [{"sm": "8.7", "path": "/usr/local/bin/router-87"}, {"sm": "12.5", "path": "/usr/local/bin/router-125"}]}`, 0o644)
	for _, sm := range []string{"87", "125"} {
		WriteFile(t, root, "/usr/local/bin/router-"+sm, strings.Replace(RouterScript, "%s", "sm_"+sm, 1), 0o755)
	}
	InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu")
	return root
}

// StandinRelease is an /etc/nv_tegra_release first line for an L4T version.
func StandinRelease(l4t string) string {
	v, err := computecap.ParseL4TVersion(l4t)
	if err != nil {
		panic(err)
	}
	return "# R" + strconv.Itoa(v.Major) + " (release), REVISION: " + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch) +
		", GCID: 1, BOARD: generic, EABI: aarch64, DATE: Mon Jan  1 00:00:00 UTC 2026\n"
}

// Script writes a shell script with body and returns its path.
func Script(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}
