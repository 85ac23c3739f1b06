package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/runimage"
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
		name       string
		compatible string
		model      string
		socID      string
		release    string
	}{
		{name: "orin-jp6", socID: "35\n", release: "# R36 (release), REVISION: 4.3, ",
			compatible: "nvidia,p3768-0000+p3767-0005-super\x00nvidia,p3767-0005\x00nvidia,tegra234\x00",
			model:      "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super\x00"},
		{name: "orin-jp7.2", socID: "35\n", release: "# R39 (release), REVISION: 2.0, ",
			compatible: "nvidia,p3737-0000+p3701-0005\x00nvidia,p3701-0005\x00nvidia,tegra234\x00",
			model:      "NVIDIA Jetson AGX Orin Developer Kit\x00"},
		{name: "thor-jp7.0", socID: "38\n", release: "# R38 (release), REVISION: 2.0, ",
			compatible: "nvidia,p4071-0000+p3834-0008\x00nvidia,p3834-0008\x00nvidia,tegra264\x00",
			model:      "NVIDIA Jetson AGX Thor Developer Kit\x00"},
		{name: "thor-jp7.2", socID: "38\n", release: "# R39 (release), REVISION: 2.0, ",
			compatible: "nvidia,p4071-0000+p3834-0008\x00nvidia,p3834-0008\x00nvidia,tegra264\x00",
			model:      "NVIDIA Jetson AGX Thor Developer Kit\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, ok := got[tt.name]
			require.True(t, ok)
			require.Equal(t, tt.name, host.Name)
			require.Equal(t, filepath.Join(dir, tt.name), host.Root)
			require.Equal(t, tt.compatible, readHostFile(t, host, "sys/firmware/devicetree/base/compatible"))
			require.Equal(t, tt.model, readHostFile(t, host, "sys/firmware/devicetree/base/model"))
			require.Equal(t, tt.socID, readHostFile(t, host, "sys/devices/soc0/soc_id"))
			require.Equal(t, "Tegra\n", readHostFile(t, host, "sys/devices/soc0/family"))
			release := readHostFile(t, host, "etc/nv_tegra_release")
			require.True(t, strings.HasPrefix(release, tt.release), release)
		})
	}
}

// A host without an L4T version gets no release file.
func TestFakeHostWithoutL4T(t *testing.T) {
	root := filepath.Join(t.TempDir(), "plain")
	h := FakeHost{Name: "plain", Compatible: []string{"vendor,board"}, Model: "Board", SocID: 1}
	require.NoError(t, h.write(root))
	_, err := os.Stat(filepath.Join(root, "etc", "nv_tegra_release"))
	require.ErrorIs(t, err, os.ErrNotExist)
	data, err := os.ReadFile(filepath.Join(root, "sys/firmware/devicetree/base/compatible"))
	require.NoError(t, err)
	require.Equal(t, "vendor,board\x00", string(data))
}

func TestWriteHostsFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := WriteHosts(file)
	require.Error(t, err)
	require.Contains(t, err.Error(), "fake host orin-jp6")
}
