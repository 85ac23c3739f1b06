package nvtoolkit_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/nvtoolkit"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/computecap"
)

// base is the stand-in base image the runs use: Debian's arm64 busybox and
// glibc (with ldconfig), nothing of NVIDIA's; compat is base with CUDA 13.2
// images' forward-compatibility driver for Orin.
const (
	base   = "jetbake.test/nvtoolkit-base:1"
	compat = "jetbake.test/nvtoolkit-compat:1"
)

// rig is a bed, a dockerd whose "nvidia" runtime is the bed's, and the base.
type rig struct {
	bed *nvtoolkit.Bed
	d   *e2e.Dockerd
}

func newRig(t *testing.T) *rig {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: runs without -short (make test)")
	}
	ctx := t.Context()
	root, err := e2e.FindRepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(root, "bin")
	// dockerd's sockets must stay short: a folder under /tmp, not t.TempDir.
	work, err := os.MkdirTemp("", "jb-nvtk-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = e2e.UnmountUnder(work); _ = os.RemoveAll(work) })
	bed, err := nvtoolkit.NewBed(ctx, filepath.Join(work, "bed"), bin, filepath.Join(bin, "standin"), root)
	require.NoError(t, err, "the runs through NVIDIA's runtime need the toolkit; they fail rather than skip")
	d, err := e2e.StartDockerd(ctx, filepath.Join(work, "d"), e2e.WithRuntime("nvidia", bed.RuntimePath()))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })

	kit := standin.Kit{Busybox: filepath.Join(bin, "deps", "busybox-arm64", "bin", "busybox"),
		Glibc: filepath.Join(bin, "deps", "glibc-arm64"), Cache: filepath.Join(bin, "standin")}
	img, err := kit.Image(ctx, standin.Base{Ref: base, CUDA: "12.6"})
	require.NoError(t, err)
	withCompat, err := mutate.AppendLayers(img, compatLayer(t))
	require.NoError(t, err)
	for ref, img := range map[string]v1.Image{base: img, compat: withCompat} {
		tag, err := name.NewTag(ref)
		require.NoError(t, err)
		tb := filepath.Join(work, strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
		require.NoError(t, tarball.WriteToFile(tb, tag, img))
		_, err = e2e.DockerLoad(ctx, d, tb)
		require.NoError(t, err)
	}
	return &rig{bed: bed, d: d}
}

// compatLayer holds /usr/local/cuda/compat_orin/libcuda.so.1 and its
// versioned file, as the CUDA 13.2 images ship them for Orin.
func compatLayer(t *testing.T) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := "usr/local/cuda/compat_orin/"
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeDir, Name: "usr/local/cuda/", Mode: 0o755},
		{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755},
		{Typeflag: tar.TypeReg, Name: dir + "libcuda.so.1.13.2", Mode: 0o644, Size: 5},
		{Typeflag: tar.TypeSymlink, Name: dir + "libcuda.so.1", Linkname: "libcuda.so.1.13.2", Mode: 0o777},
	} {
		require.NoError(t, tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := tw.Write([]byte("\x7fELF\n"[:h.Size]))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	require.NoError(t, err)
	return l
}

// host adds a fake host of spec.
func (r *rig) host(t *testing.T, spec nvtoolkit.HostSpec) *nvtoolkit.Host {
	t.Helper()
	h, err := r.bed.AddHost(t.Context(), spec)
	require.NoError(t, err)
	return h
}

// run runs script in the base on h through the runtime in mode m and
// returns its standard output; a failed run fails the test. The base has
// CUDA_VERSION and no NVIDIA_REQUIRE_CUDA, which the runtime checks as
// cuda>=CUDA_VERSION: the runs turn that off (see TestRequirementCheck).
func (r *rig) run(t *testing.T, h *nvtoolkit.Host, m nvtoolkit.Mode, script string) string {
	t.Helper()
	res := r.docker(t, h, m, base, script, "NVIDIA_DISABLE_REQUIRE=true")
	log, _ := os.ReadFile(h.RuntimeLog())
	require.Equal(t, 0, res.ExitCode, "stderr: %s\nruntime log:\n%s", res.Stderr, tail(string(log), 20))
	return res.Stdout
}

// docker runs script in image on h through the runtime in mode m with env.
func (r *rig) docker(t *testing.T, h *nvtoolkit.Host, m nvtoolkit.Mode, image, script string, env ...string) runimage.Result {
	t.Helper()
	require.NoError(t, r.bed.Use(h, m))
	args := []string{"run", "--rm", "--platform", "linux/arm64", "--runtime", "nvidia",
		"-e", "NVIDIA_VISIBLE_DEVICES=all", "-v", h.SysDevices + ":/sys/devices:ro"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	res, err := r.d.Docker(context.Background(), append(args, image, "sh", "-c", script)...)
	require.NoError(t, err)
	return res
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// seen is a script that prints what a container sees of its host.
func seen(h *nvtoolkit.Host) string {
	var b strings.Builder
	fmt.Fprintf(&b, "printf 'release: %%s\\n' \"$(cat /etc/nv_tegra_release 2>&1)\"\n")
	fmt.Fprintf(&b, "echo soc_id: $(cat /sys/devices/soc0/soc_id)\n")
	fmt.Fprintf(&b, "test -f %s && echo libcuda: present\n", h.Libcuda)
	fmt.Fprintf(&b, "ldconfig -p | grep -q 'libcuda.so.1 .*=> %s$' && echo ldcache: libcuda\n", h.Libcuda)
	for _, d := range h.Devices {
		fmt.Fprintf(&b, "test -c %s && echo dev: %s\n", d, d)
	}
	b.WriteString("true\n")
	return b.String()
}

// want is what seen prints on h.
func want(h *nvtoolkit.Host) string {
	lines := []string{"release: " + strings.TrimSpace(standin.TegraRelease(h.L4T)),
		"soc_id: " + fmt.Sprint(h.SocID), "libcuda: present", "ldcache: libcuda"}
	for _, d := range h.Devices {
		lines = append(lines, "dev: "+d)
	}
	return strings.Join(lines, "\n") + "\n"
}

func spec(name, l4t string, socID int, gpu computecap.Capability, cuda computecap.CUDAVersion) nvtoolkit.HostSpec {
	return nvtoolkit.HostSpec{Name: name, L4T: l4t, SocID: socID, SocFamily: "Tegra", Machine: "fake " + name,
		GPU: gpu, DriverCUDA: cuda}
}

var (
	orin = computecap.Capability{Major: 8, Minor: 7}
	thor = computecap.Capability{Major: 11, Minor: 0}
)

// Every JetPack line through NVIDIA's runtime: the container gets the
// host's nv_tegra_release, its libcuda where that line puts it (and in the
// ld cache, which the update-ldcache hook rebuilt), and its device nodes as
// character devices; both in csv mode and from a spec of `nvidia-ctk cdi
// generate --mode csv` in cdi mode.
func TestEveryLineThroughTheRuntime(t *testing.T) {
	r := newRig(t)
	hosts := []nvtoolkit.HostSpec{
		spec("r35-orin", "35.4.1", 35, orin, computecap.CUDAVersion{Major: 11, Minor: 4}),
		spec("r36-orin", "36.4.3", 35, orin, computecap.CUDAVersion{Major: 12, Minor: 6}),
		spec("r38-thor", "38.2.0", 38, thor, computecap.CUDAVersion{Major: 13}),
		spec("r39-orin", "39.2.0", 35, orin, computecap.CUDAVersion{Major: 13, Minor: 2}),
		spec("r39-thor", "39.2.0", 38, thor, computecap.CUDAVersion{Major: 13, Minor: 2}),
	}
	for _, s := range hosts {
		t.Run(s.Name, func(t *testing.T) {
			h := r.host(t, s)
			require.NotEmpty(t, h.Libcuda)
			require.NotEmpty(t, h.Devices)
			require.Equal(t, want(h), r.run(t, h, nvtoolkit.ModeCSV, seen(h)))
		})
	}
	t.Run("cdi", func(t *testing.T) {
		h := r.host(t, spec("r36-orin-cdi", "36.4.3", 35, orin, computecap.CUDAVersion{Major: 12, Minor: 6}))
		require.NoError(t, r.bed.GenerateCDI(t.Context(), h))
		data, err := os.ReadFile(h.CDISpec())
		require.NoError(t, err)
		require.Contains(t, string(data), "containerPath: "+filepath.Dir(h.Libcuda)+"/libcuda.so.1.1")
		require.NotContains(t, string(data), "containerPath: "+h.Root, "container paths are the host's, without the fake root")
		require.Equal(t, want(h), r.run(t, h, nvtoolkit.ModeCDI, seen(h)))
	})
}

// Each workaround of workarounds.go is needed: without it the container
// misses what a Jetson's would have.
func TestEachWorkaroundIsNeeded(t *testing.T) {
	r := newRig(t)
	for _, tt := range []struct {
		without nvtoolkit.Workaround
		script  string
		want    string
	}{
		{without: nvtoolkit.TegraReleaseInL4TCSV, script: "test -e /etc/nv_tegra_release || echo no release",
			want: "no release\n"},
		{without: nvtoolkit.LinksWithoutRoot, script: "test -e /usr/lib/aarch64-linux-gnu/libcuda.so || echo no link; " +
			"test -L @ROOT@/usr/lib/aarch64-linux-gnu/libcuda.so && echo link under the host root",
			want: "no link\nlink under the host root\n"},
		{without: nvtoolkit.ContainerLdconfig, script: "ldconfig -p | head -1",
			want: "0 libs found in cache `/etc/ld.so.cache'\n"},
	} {
		t.Run(string(tt.without), func(t *testing.T) {
			s := spec("without-"+strings.ReplaceAll(string(tt.without), " ", "-"), "36.4.3", 35, orin,
				computecap.CUDAVersion{Major: 12, Minor: 6})
			s.Without = []nvtoolkit.Workaround{tt.without}
			h := r.host(t, s)
			require.Equal(t, tt.want, r.run(t, h, nvtoolkit.ModeCSV, strings.ReplaceAll(tt.script, "@ROOT@", h.Root)))
		})
	}
}

// NVIDIA's requirement check, which the runtime makes in its own process
// with the host's driver (here its x86 twin) before the container exists: an
// image with CUDA_VERSION 12.6 and no NVIDIA_REQUIRE_CUDA is checked as
// cuda>=12.6 all the same; NVIDIA_DISABLE_REQUIRE=true turns the check off.
func TestRequirementCheck(t *testing.T) {
	r := newRig(t)
	h := r.host(t, spec("r35-xavier", "35.4.1", 25, computecap.Capability{Major: 7, Minor: 2},
		computecap.CUDAVersion{Major: 11, Minor: 4}))
	res := r.docker(t, h, nvtoolkit.ModeCSV, base, "true")
	require.Equal(t, 125, res.ExitCode, res.Stderr)
	require.Contains(t, res.Stderr, "requirements not met: unsatisfied condition: cuda>=12.6 (cuda=11.4)")
	res = r.docker(t, h, nvtoolkit.ModeCSV, base, "true", "NVIDIA_REQUIRE_CUDA=cuda>=11.4")
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	res = r.docker(t, h, nvtoolkit.ModeCSV, base, "true", "NVIDIA_REQUIRE_CUDA=arch>=8.7")
	require.Contains(t, res.Stderr, "unsatisfied condition: arch>=8.7 (arch=7.2)", "arch is the GPU the x86 twin reports")
	require.Equal(t, 0, r.docker(t, h, nvtoolkit.ModeCSV, base, "true", "NVIDIA_DISABLE_REQUIRE=true").ExitCode)

	// The check ignores forward-compatibility libraries: an Orin with a
	// CUDA 13.0 driver (no JetPack pairs them; R39 has 13.2) is refused a
	// cuda>=13.2 image that ships compat_orin, which only the
	// enable-cuda-compat hook could enable, after the check and only where
	// NVML answers (pkg/nvcdi/lib-csv.go, getEnableCUDACompatHookOptions).
	orin130 := r.host(t, spec("r39-orin-cuda13.0", "39.2.0", 35, orin, computecap.CUDAVersion{Major: 13}))
	res = r.docker(t, orin130, nvtoolkit.ModeCSV, compat, "test -e /usr/local/cuda/compat_orin/libcuda.so.1", "NVIDIA_REQUIRE_CUDA=cuda>=13.2")
	require.Equal(t, 125, res.ExitCode, res.Stderr)
	require.Contains(t, res.Stderr, "requirements not met: unsatisfied condition: cuda>=13.2 (cuda=13.0)")
	res = r.docker(t, orin130, nvtoolkit.ModeCSV, compat, "test -e /usr/local/cuda/compat_orin/libcuda.so.1",
		"NVIDIA_REQUIRE_CUDA=cuda>=13.2", "NVIDIA_DISABLE_REQUIRE=true")
	require.Equal(t, 0, res.ExitCode, res.Stderr)
}
