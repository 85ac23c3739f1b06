package nvtoolkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// Every JetPack line of the table of Jetson facts from JetPack 5 on has a
// CSV table, whose driver is where the table says and where the entrypoint
// finds it, on each of its GPUs.
func TestLines(t *testing.T) {
	tab := computecap.DefaultTable()
	for _, r := range tab.Releases() {
		l4t, err := computecap.ParseL4TVersion(r.L4T)
		require.NoError(t, err)
		if l4t.Major < 35 {
			continue
		}
		line, ok := LineOf(l4t.Major)
		require.True(t, ok, "JetPack %s (L4T %s) has no CSV table", r.JetPack, r.L4T)
		for _, soc := range tab.SoCs {
			if !soc.Supports(r.JetPack) {
				continue
			}
			lib := line.Libcuda(soc.Family)
			require.NotEmpty(t, lib, "%s on %s", line.Name, soc.Family)
			require.Equal(t, r.DriverDirFor(soc.Family), filepath.Dir(lib), "%s on %s: the table of Jetson facts names the CSV list's driver folder", line.Name, soc.Family)
			require.Contains(t, host.LibcudaDirs(tab), filepath.Dir(lib), "the entrypoint looks for libcuda in %s", filepath.Dir(lib))
			require.NotEmpty(t, line.Devices(soc.Family))
			drivers := 0
			for _, f := range line.Files {
				for _, row := range f.Rows {
					require.Contains(t, []string{"lib", "sym", "dev", "dir"}, row.Kind)
					require.True(t, filepath.IsAbs(row.Path), row.Path)
					require.Equal(t, row.Kind == "sym", row.Target != "", "%s: a sym row has a target, no other", row.Path)
					if row.Driver && row.present(soc.Family) {
						drivers++
						require.Equal(t, filepath.Dir(lib), filepath.Dir(row.Path))
					}
				}
			}
			require.Equal(t, 1, drivers, "%s on %s: one libcuda.so.1.1", line.Name, soc.Family)
		}
	}
	_, ok := LineOf(34)
	require.False(t, ok)
}

func TestCSVFiles(t *testing.T) {
	r35, _ := LineOf(35)
	h := &Host{Line: r35}
	files := h.csvFiles()
	require.Len(t, files, 1)
	require.True(t, strings.HasSuffix(files[0].Text(), "lib, /etc/nv_tegra_release\n"), files[0].Text())
	require.NotContains(t, r35.Files[0].Text(), "nv_tegra_release", "the line's own table is left alone")

	r36, _ := LineOf(36)
	h = &Host{Line: r36}
	require.Equal(t, []string{"devices.csv", "drivers.csv", "l4t.csv"}, names(h.csvFiles()))
	require.Equal(t, "lib, /etc/nv_tegra_release\n", h.csvFiles()[2].Text())
	h.Without = []Workaround{TegraReleaseInL4TCSV}
	require.Equal(t, []string{"devices.csv", "drivers.csv"}, names(h.csvFiles()))
}

func names(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

// The host's nvidia-ctk: hooks go to nvidia-cdi-hook with the links rid of
// the host root and the trampoline for update-ldcache; the rest to nvidia-ctk.
func TestCTKWrapper(t *testing.T) {
	dir := t.TempDir()
	echo := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho "+name+" \"$@\"\n"), 0o755))
		return p
	}
	tk := Toolkit{CTK: echo("ctk"), CDIHook: echo("hook")}
	h := &Host{Root: "/srv/host's root"}
	wrapper := filepath.Join(dir, "nvidia-ctk")
	require.NoError(t, os.WriteFile(wrapper, h.ctkWrapper(tk, "/t/ldconfig"), 0o755))
	run := func(args ...string) string {
		out, err := exec.Command(wrapper, args...).CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	require.Equal(t, "ctk cdi generate --mode csv", run("cdi", "generate", "--mode", "csv"))
	require.Equal(t, "hook create-symlinks --link libcuda.so.1.1::/usr/lib/libcuda.so.1 --link a::/b",
		run("hook", "create-symlinks", "--link", "libcuda.so.1.1::/srv/host's root/usr/lib/libcuda.so.1", "--link", "a::/b"))
	require.Equal(t, "hook update-ldcache --ldconfig-path /t/ldconfig --folder /usr/lib/nvidia",
		run("hook", "update-ldcache", "--folder", "/usr/lib/nvidia"))
	require.Equal(t, "hook update-ldcache --ldconfig-path /x --folder /f",
		run("hook", "update-ldcache", "--ldconfig-path", "/x", "--folder", "/f"), "a given ldconfig is kept")

	h.Without = []Workaround{LinksWithoutRoot, ContainerLdconfig}
	require.NoError(t, os.WriteFile(wrapper, h.ctkWrapper(tk, "/t/ldconfig"), 0o755))
	require.Equal(t, "hook create-symlinks --link x::/srv/host's root/y", run("hook", "create-symlinks", "--link", "x::/srv/host's root/y"))
	require.Equal(t, "hook update-ldcache --ldconfig-path /sbin/ldconfig --folder /f", run("hook", "update-ldcache", "--folder", "/f"))
}

func TestFind(t *testing.T) {
	_, err := Find(t.TempDir())
	require.ErrorContains(t, err, "run 'make deps'")
	dir := t.TempDir()
	for _, n := range []string{RuntimeName, CTKName, CDIHookName} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\necho something else\n"), 0o755))
	}
	_, err = Find(dir)
	require.ErrorContains(t, err, "not NVIDIA's runtime")
}
