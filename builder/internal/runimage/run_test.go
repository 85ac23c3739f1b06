package runimage

import (
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/require"
)

// testConfig is an image config the way jetbake writes it.
func testConfig() *v1.ConfigFile {
	return &v1.ConfigFile{Config: v1.Config{
		Entrypoint: []string{"/usr/local/bin/jetbake-entrypoint"},
		Env:        []string{"PATH=/usr/bin:/bin", "NVIDIA_REQUIRE_CUDA=cuda>=12.6"},
	}}
}

// fakeHost lays out a host root with sys/ and, when l4t, etc/nv_tegra_release.
func fakeHost(t *testing.T, l4t bool) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys", "devices", "soc0"), 0o755))
	if l4t {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "nv_tegra_release"), []byte("# R36 (release), REVISION: 4.3\n"), 0o644))
	}
	return root
}

func mountsByDestination(spec *specs.Spec) map[string]specs.Mount {
	out := map[string]specs.Mount{}
	for _, m := range spec.Mounts {
		out[m.Destination] = m
	}
	return out
}

func TestRuntimeSpecMounts(t *testing.T) {
	withL4T := fakeHost(t, true)
	withoutL4T := fakeHost(t, false)
	tests := []struct {
		name        string
		host        Host
		wantSys     specs.Mount
		wantRelease *specs.Mount
	}{
		{
			name:    "no NVIDIA runtime",
			host:    Host{Name: "none"},
			wantSys: specs.Mount{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
		},
		{
			name:    "Jetson with L4T",
			host:    Host{Name: "orin", Root: withL4T},
			wantSys: specs.Mount{Destination: "/sys", Type: "bind", Source: filepath.Join(withL4T, "sys"), Options: []string{"rbind", "ro"}},
			wantRelease: &specs.Mount{Destination: "/etc/nv_tegra_release", Type: "bind",
				Source: filepath.Join(withL4T, "etc", "nv_tegra_release"), Options: []string{"bind", "ro"}},
		},
		{
			name:    "host without L4T file",
			host:    Host{Name: "bare", Root: withoutL4T},
			wantSys: specs.Mount{Destination: "/sys", Type: "bind", Source: filepath.Join(withoutL4T, "sys"), Options: []string{"rbind", "ro"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := runtimeSpec("/rootfs", testConfig(), tt.host, nil, nil)
			mounts := mountsByDestination(spec)
			require.Equal(t, tt.wantSys, mounts["/sys"])
			release, ok := mounts["/etc/nv_tegra_release"]
			if tt.wantRelease == nil {
				require.False(t, ok)
			} else {
				require.Equal(t, *tt.wantRelease, release)
			}
			for _, dest := range []string{"/proc", "/dev", "/tmp"} {
				require.Contains(t, mounts, dest)
			}
			wantCount := 4
			if tt.wantRelease != nil {
				wantCount = 5
			}
			require.Len(t, spec.Mounts, wantCount)
		})
	}
}

func TestRuntimeSpecProcess(t *testing.T) {
	cfg := testConfig()
	tests := []struct {
		name     string
		host     Host
		args     []string
		env      []string
		wantArgs []string
		wantEnv  []string
	}{
		{name: "no args", wantArgs: []string{"/usr/local/bin/jetbake-entrypoint"},
			wantEnv: []string{"PATH=/usr/bin:/bin", "NVIDIA_REQUIRE_CUDA=cuda>=12.6"}},
		{name: "args and env", args: []string{"--port", "8080"}, env: []string{"JETBAKE_DEBUG=1"},
			wantArgs: []string{"/usr/local/bin/jetbake-entrypoint", "--port", "8080"},
			wantEnv:  []string{"PATH=/usr/bin:/bin", "NVIDIA_REQUIRE_CUDA=cuda>=12.6", "JETBAKE_DEBUG=1"}},
		{name: "the host's env after the image's", host: Host{Env: []string{"FAKE_CUDA_MAJOR=8"}}, env: []string{"JETBAKE_DEBUG=1"},
			wantArgs: []string{"/usr/local/bin/jetbake-entrypoint"},
			wantEnv:  []string{"PATH=/usr/bin:/bin", "NVIDIA_REQUIRE_CUDA=cuda>=12.6", "FAKE_CUDA_MAJOR=8", "JETBAKE_DEBUG=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := runtimeSpec("/work/rootfs", cfg, tt.host, tt.args, tt.env)
			require.Equal(t, tt.wantArgs, spec.Process.Args, "the image's own command is nil")
			require.Equal(t, tt.wantEnv, spec.Process.Env)
			require.Equal(t, "/", spec.Process.Cwd)
			require.True(t, spec.Process.NoNewPrivileges)
			require.Equal(t, &specs.Root{Path: "/work/rootfs", Readonly: true}, spec.Root)
			require.Equal(t, specs.Version, spec.Version)
			require.NotNil(t, spec.Linux)
			require.Len(t, spec.Linux.Namespaces, 4)
		})
	}
	require.Equal(t, []string{"/usr/local/bin/jetbake-entrypoint"}, cfg.Config.Entrypoint, "the config is not changed")
	require.Len(t, cfg.Config.Env, 2)
}

// As with docker run: the image's CMD is the argument list unless the run
// gives arguments, which replace it; the host's env comes before the run's.
func TestRuntimeSpecCmdAndHostEnv(t *testing.T) {
	cfg := testConfig()
	cfg.Config.Cmd = []string{"--json-output"}
	host := Host{Name: "orin", Env: []string{"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7"}}
	spec := runtimeSpec("/r", cfg, host, nil, []string{"X=1"})
	require.Equal(t, []string{"/usr/local/bin/jetbake-entrypoint", "--json-output"}, spec.Process.Args)
	require.Equal(t, []string{"PATH=/usr/bin:/bin", "NVIDIA_REQUIRE_CUDA=cuda>=12.6", "FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "X=1"},
		spec.Process.Env)
	spec = runtimeSpec("/r", cfg, host, []string{"--port", "8080"}, nil)
	require.Equal(t, []string{"/usr/local/bin/jetbake-entrypoint", "--port", "8080"}, spec.Process.Args, "args replace CMD")
}

// The process's slices do not share memory with the config's.
func TestRuntimeSpecNoAliasing(t *testing.T) {
	cfg := testConfig()
	cfg.Config.Entrypoint = append(make([]string, 0, 8), "/ep")
	a := runtimeSpec("/r", cfg, Host{}, []string{"a"}, nil)
	b := runtimeSpec("/r", cfg, Host{}, []string{"b"}, nil)
	require.Equal(t, []string{"/ep", "a"}, a.Process.Args)
	require.Equal(t, []string{"/ep", "b"}, b.Process.Args)
}

func TestNewRunnerWithoutRunc(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := NewRunner(t.TempDir())
	require.Error(t, err)
	require.Contains(t, err.Error(), "runc is not installed")
	require.Contains(t, err.Error(), "make deps")
}

func TestNewRunnerFindsRunc(t *testing.T) {
	bin := t.TempDir()
	runc := filepath.Join(bin, "runc")
	require.NoError(t, os.WriteFile(runc, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", bin)
	r, err := NewRunner("/work")
	require.NoError(t, err)
	require.Equal(t, runc, r.runc)
	require.Equal(t, "/work", r.workDir)
}

// A fake Orin's CPU is bound over /proc/cpuinfo, as LXCFS does.
func TestRuntimeSpecCPUInfo(t *testing.T) {
	host := Host{Name: "orin", Root: fakeHost(t, true), CPUInfo: "/hosts/orin/proc/cpuinfo"}
	spec := runtimeSpec("/rootfs", testConfig(), host, nil, nil)
	require.Equal(t, specs.Mount{Destination: "/proc/cpuinfo", Type: "bind", Source: "/hosts/orin/proc/cpuinfo", Options: []string{"bind", "ro"}},
		mountsByDestination(spec)["/proc/cpuinfo"])
	spec = runtimeSpec("/rootfs", testConfig(), Host{Name: "none"}, nil, nil)
	require.NotContains(t, mountsByDestination(spec), "/proc/cpuinfo")
}

// The host's GPU device nodes go into the spec's linux.devices, as NVIDIA's
// runtime writes them, for runc to make: /dev/null's numbers; a host
// without nodes gets none.
func TestRuntimeSpecDevices(t *testing.T) {
	host := Host{Name: "orin", Root: fakeHost(t, true), Devices: []string{"/dev/nvgpu/igpu0/ctrl", "/dev/nvmap"}}
	spec := runtimeSpec("/rootfs", testConfig(), host, nil, nil)
	require.Len(t, spec.Linux.Devices, 2)
	for i, p := range host.Devices {
		d := spec.Linux.Devices[i]
		require.Equal(t, p, d.Path)
		require.Equal(t, "c", d.Type)
		require.Equal(t, [2]int64{1, 3}, [2]int64{d.Major, d.Minor})
		require.Equal(t, os.FileMode(0o666), *d.FileMode)
	}
	require.Empty(t, runtimeSpec("/rootfs", testConfig(), Host{Name: "none"}, nil, nil).Linux.Devices)
}

// The host's driver goes where NVIDIA's runtime puts it, with its links;
// the ld cache is the image's own ldconfig's work, and an image without
// one fails as the runtime's hook does.
func TestDriverLibraries(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(t.TempDir(), "libcuda.so.1.1")
	require.NoError(t, os.WriteFile(src, []byte("\x7fELF driver"), 0o644))
	libs := []HostLib{{Source: src, Path: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1", Links: []string{"libcuda.so.1"}}}
	require.NoError(t, placeLibs(root, libs))
	data, err := os.ReadFile(filepath.Join(root, "usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1"))
	require.NoError(t, err)
	require.Equal(t, "\x7fELF driver", string(data))
	link, err := os.Readlink(filepath.Join(root, "usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1"))
	require.NoError(t, err)
	require.Equal(t, "libcuda.so.1.1", link, "the sym entry's link, by soname")

	err = updateLdcache(t.Context(), root, libs)
	require.ErrorContains(t, err, "update-ldcache: the image has no /sbin/ldconfig")
	conf, err := filepath.Glob(filepath.Join(root, "etc/ld.so.conf.d/00-nvcr-*.conf"))
	require.NoError(t, err)
	require.Len(t, conf, 1)
	data, err = os.ReadFile(conf[0])
	require.NoError(t, err)
	require.Equal(t, "/usr/lib/aarch64-linux-gnu/nvidia\n", string(data), "the folder, as the hook lists it")

	same, done, err := withDriver(t.Context(), root, t.TempDir(), Host{Name: "none"})
	require.NoError(t, err)
	done()
	require.Equal(t, root, same, "a host without libraries runs on the image itself")
}
