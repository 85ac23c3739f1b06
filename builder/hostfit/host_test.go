package hostfit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

var (
	orin = computecap.Capability{Major: 8, Minor: 7}
	thor = computecap.Capability{Major: 11, Minor: 0}
)

func l4t(major, minor, patch int) computecap.L4TVersion {
	return computecap.L4TVersion{Major: major, Minor: minor, Patch: patch}
}

func cuda(major, minor int) computecap.CUDAVersion {
	return computecap.CUDAVersion{Major: major, Minor: minor}
}

func TestCompatible(t *testing.T) {
	jp62 := ImageClaims{JetPack: "6.2", L4T: l4t(36, 4, 3), CUDA: cuda(12, 6), Targets: []computecap.Capability{orin}}
	jp70 := ImageClaims{JetPack: "7.0", L4T: l4t(38, 2, 0), CUDA: cuda(13, 0), Targets: []computecap.Capability{thor}}
	jp72 := ImageClaims{JetPack: "7.2", L4T: l4t(39, 2, 0), CUDA: cuda(13, 2), Targets: []computecap.Capability{orin, thor}}
	tests := []struct {
		name   string
		host   Host
		img    ImageClaims
		ok     bool
		reason string
	}{
		{"orin R36.4.3 runs 6.2", Host{GPU: orin, L4T: l4t(36, 4, 3)}, jp62, true, "R36.4.3"},
		{"orin R36.4.7 runs 6.2", Host{GPU: orin, L4T: l4t(36, 4, 7)}, jp62, true, ""},
		{"orin R36.4.0 runs 6.2 (same minor)", Host{GPU: orin, L4T: l4t(36, 4, 0)}, jp62, true, ""},
		{"orin R36.3 refuses 6.2", Host{GPU: orin, L4T: l4t(36, 3, 0)}, jp62, false, "the host has L4T R36.3.0 (JetPack 6.0) but the image needs L4T R36.4 or a later R36 release"},
		{"orin R35 refuses 6.2", Host{GPU: orin, L4T: l4t(35, 4, 1)}, jp62, false, "the host has L4T R35.4.1 (JetPack 5.1.2)"},
		{"orin without L4T runs 6.2, as the entrypoint starts it", Host{GPU: orin}, jp62, true, "unknown"},
		{"thor refuses an Orin-only image", Host{GPU: thor, L4T: l4t(38, 2, 0), DriverCUDA: cuda(13, 0)}, jp62, false, "no binary for the host's Jetson Thor"},
		{"no GPU", Host{L4T: l4t(36, 4, 3)}, jp62, false, "no NVIDIA GPU"},
		{"desktop 8.6 refuses sm_87", Host{GPU: computecap.Capability{Major: 8, Minor: 6}, DriverCUDA: cuda(12, 8)}, jp62, false, "no binary"},
		{"thor R38.2 runs 7.0", Host{GPU: thor, L4T: l4t(38, 2, 0), DriverCUDA: cuda(13, 0)}, jp70, true, "CUDA 13.0"},
		{"thor R39 runs 7.0 (SBSA ignores the L4T)", Host{GPU: thor, L4T: l4t(39, 2, 0), DriverCUDA: cuda(13, 2)}, jp70, true, ""},
		{"thor R38 refuses 7.2", Host{GPU: thor, L4T: l4t(38, 4, 0), DriverCUDA: cuda(13, 0)}, jp72, false, "needs a driver for CUDA 13.2 or a later 13.x"},
		{"orin on a CUDA 13.0 driver runs 7.2 with compat_orin", Host{GPU: orin, L4T: l4t(39, 2, 0), DriverCUDA: cuda(13, 0)}, jp72, true, "compat_orin"},
		{"orin R36 refuses 7.2", Host{GPU: orin, L4T: l4t(36, 4, 3), DriverCUDA: cuda(12, 6)}, jp72, false, "the host has a driver for CUDA 12.6"},
		{"orin R39 runs 7.2", Host{GPU: orin, L4T: l4t(39, 2, 0), DriverCUDA: cuda(13, 2)}, jp72, true, ""},
		{"no driver answer: the table's CUDA for R39.2", Host{GPU: thor, L4T: l4t(39, 2, 0)}, jp72, true, "CUDA 13.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Compatible(tt.host, tt.img)
			require.Equal(t, tt.ok, v.OK, v.Reason)
			require.Contains(t, v.Reason, tt.reason)
			if !v.OK {
				require.NotEmpty(t, v.Needs)
			}
		})
	}
}

func TestSysrootReader(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  Host
	}{
		{"orin nano, JetPack 6.2.1 reported as R36.4.7", map[string]string{
			"etc/nv_tegra_release":                          "# R36 (release), REVISION: 4.7, GCID: 42132812, BOARD: generic, EABI: aarch64, DATE: x\n",
			"proc/device-tree/compatible":                   "nvidia,p3768-0000+p3767-0005-super\x00nvidia,p3767-0005\x00nvidia,tegra234\x00",
			"proc/device-tree/model":                        "NVIDIA Jetson Orin Nano Developer Kit\x00",
			"usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1": "",
		}, Host{Model: "NVIDIA Jetson Orin Nano Developer Kit", SoC: "tegra234", Family: "Orin", GPU: orin,
			L4T: l4t(36, 4, 7), L4TVersion: "36.4.7", JetPack: "6.2.1", DriverCUDA: cuda(12, 6),
			DriverCUDAFrom: "L4T 36.4.7 in the table of Jetson facts", Libcuda: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1"}},
		{"thor in a container: soc_id only", map[string]string{
			"etc/nv_tegra_release":    "# R38 (release), REVISION: 2.0, GCID: 1, BOARD: generic\n",
			"sys/devices/soc0/family": "Tegra\n",
			"sys/devices/soc0/soc_id": "38\n",
		}, Host{SoC: "tegra264", Family: "Thor", GPU: thor, L4T: l4t(38, 2, 0), L4TVersion: "38.2.0", JetPack: "7.0",
			DriverCUDA: cuda(13, 0), DriverCUDAFrom: "L4T 38.2.0 in the table of Jetson facts"}},
		{"grace is not a jetson", map[string]string{
			"sys/devices/soc0/family": "Tegra\n",
			"sys/devices/soc0/soc_id": "36\n",
		}, Host{}},
		{"JetPack 5.0.2 is L4T 35.1.0", map[string]string{
			"etc/nv_tegra_release": "# R35 (release), REVISION: 1.0, GCID: 1\n",
		}, Host{L4T: l4t(35, 1, 0), L4TVersion: "35.1.0", JetPack: "5.0.2", DriverCUDA: cuda(11, 4), DriverCUDAFrom: "L4T 35.1.0 in the table of Jetson facts"}},
		{"a broken release file", map[string]string{"etc/nv_tegra_release": "R36 rev 4\n"}, Host{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for n, data := range tt.files {
				p := filepath.Join(root, n)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
			}
			got, err := SysrootReader{}.Read(context.Background(), root)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
