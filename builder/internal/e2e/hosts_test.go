package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/runimage"
)

func readHostFile(t *testing.T, host runimage.Host, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(host.Root, name))
	require.NoError(t, err)
	return string(data)
}

func TestWriteHosts(t *testing.T) {
	dir := t.TempDir()
	got, err := WriteHosts(dir)
	require.NoError(t, err)
	require.Len(t, got, len(hosts)+1)
	require.Equal(t, runimage.Host{Name: "none"}, got["none"], "no root: the machine's own /sys, no L4T file")

	tests := []struct {
		name, machine, socID, release string
		env                           []string
	}{
		{name: "orin-jp5.1.2", socID: "35\n", release: "# R35 (release), REVISION: 4.1, ", machine: agxOrin,
			env: []string{"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=11040"}},
		{name: "orin-jp6.0", socID: "35\n", release: "# R36 (release), REVISION: 3.0, ", machine: agxOrin},
		{name: "orin-jp6", socID: "35\n", release: "# R36 (release), REVISION: 4.3, ", machine: orinNanoSuper},
		{name: "orin-jp6.2.1", socID: "35\n", release: "# R36 (release), REVISION: 4.7, ", machine: agxOrin},
		{name: "orin-jp7.2", socID: "35\n", release: "# R39 (release), REVISION: 2.0, ", machine: agxOrin,
			env: []string{"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=13020"}},
		{name: "thor-jp7.0", socID: "38\n", release: "# R38 (release), REVISION: 2.0, ", machine: agxThor,
			env: []string{"FAKE_CUDA_MAJOR=11", "FAKE_CUDA_MINOR=0", "FAKE_CUDA_DRIVER_VERSION=13000"}},
		{name: "thor-jp7.1", socID: "38\n", release: "# R38 (release), REVISION: 4.0, ", machine: agxThor},
		{name: "thor-jp7.2", socID: "38\n", release: "# R39 (release), REVISION: 2.0, ", machine: agxThor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, ok := got[tt.name]
			require.True(t, ok)
			require.Equal(t, tt.name, host.Name)
			require.Equal(t, filepath.Join(dir, tt.name), host.Root)
			require.Equal(t, tt.machine+"\n", readHostFile(t, host, "sys/devices/soc0/machine"))
			require.Equal(t, tt.socID, readHostFile(t, host, "sys/devices/soc0/soc_id"))
			require.Equal(t, "Tegra\n", readHostFile(t, host, "sys/devices/soc0/family"))
			release := readHostFile(t, host, "etc/nv_tegra_release")
			require.True(t, strings.HasPrefix(release, tt.release), release)
			_, err := os.Stat(filepath.Join(host.Root, "sys", "firmware"))
			require.ErrorIs(t, err, os.ErrNotExist, "the device tree is masked, as in a default docker run")
			if tt.env != nil {
				require.Equal(t, tt.env, host.Env)
			}
		})
	}
}

// A host without an L4T version gets no release file.
func TestFakeHostWithoutL4T(t *testing.T) {
	root := filepath.Join(t.TempDir(), "plain")
	h := FakeHost{Name: "plain", Machine: "Board", SocID: 1}
	require.NoError(t, h.write(root))
	_, err := os.Stat(filepath.Join(root, "etc", "nv_tegra_release"))
	require.ErrorIs(t, err, os.ErrNotExist)
	data, err := os.ReadFile(filepath.Join(root, "sys/devices/soc0/soc_id"))
	require.NoError(t, err)
	require.Equal(t, "1\n", string(data))
}

func TestWriteHostsFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := WriteHosts(file)
	require.Error(t, err)
	require.Contains(t, err.Error(), "fake host orin-jp5.1.2")
}
