package baseinfo

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

func TestCheck(t *testing.T) {
	tegra := computecap.FlavourTegra
	jp62 := func(role, ref string) Need {
		return Need{Role: role, Ref: ref, JetPack: "6.2", Flavour: tegra, CUDA: "12.6"}
	}
	jp70 := Need{Role: "runtime", Ref: "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime", JetPack: "7.0", Flavour: computecap.FlavourSBSA, CUDA: "13.0"}
	fromTargets := func(f computecap.Flavour, tree string) []string {
		return []string{"/" + tree + "/version.json", "/" + tree + "/" + f.TargetDir()}
	}
	for _, tt := range []struct {
		name string
		got  Info
		need Need
		want string
	}{
		{name: "fits", got: Info{Flavour: tegra, CUDA: "12.6.68"}, need: jp62("build", "nvcr.io/nvidia/l4t-jetpack:r36.4.0")},
		{name: "patch level does not matter", got: Info{Flavour: tegra, CUDA: "12.6"}, need: jp62("runtime", "x:1")},
		{name: "no markers: nothing to hold against it", got: Info{}, need: jp62("runtime", "x:1")},
		{name: "no flavour asked", got: Info{Flavour: computecap.FlavourSBSA, CUDA: "12.6.3"}, need: Need{Role: "runtime", Ref: "x:1", CUDA: "12.6"}},
		{name: "a build base of another CUDA minor, its tag giving no hint",
			got:  Info{Flavour: tegra, CUDA: "12.2.140", From: fromTargets(tegra, "usr/local/cuda-12.2")},
			need: jp62("build", "nvcr.io/nvidia/l4t-jetpack:r36.4.0-custom"),
			want: "build base nvcr.io/nvidia/l4t-jetpack:r36.4.0-custom holds Tegra CUDA 12.2.140 (read from /usr/local/cuda-12.2/version.json, " +
				"/usr/local/cuda-12.2/targets/aarch64-linux), but the release's cuda is 12.6: its routers would be compiled against CUDA 12.2; " +
				"use a base with CUDA 12.6 such as nvcr.io/nvidia/l4t-jetpack:r36.4.0, or correct the release's cuda"},
		{name: "a runtime base of another CUDA major",
			got:  Info{CUDA: "11.4.19", From: []string{"config: CUDA_VERSION"}},
			need: jp62("runtime", "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"),
			want: "runtime base nvcr.io/nvidia/l4t-cuda:12.6.11-runtime holds CUDA 11.4.19 of no known flavour (read from config: CUDA_VERSION), " +
				"but the release's cuda is 12.6: its routers would run on CUDA 11.4; use a base with CUDA 12.6 such as nvcr.io/nvidia/l4t-jetpack:r36.4.0, " +
				"or correct the release's cuda"},
		{name: "a Tegra base for JetPack 7",
			got:  Info{Flavour: tegra, CUDA: "12.6.11", From: fromTargets(tegra, "usr/local/cuda-12.6")},
			need: jp70,
			want: "runtime base nvcr.io/nvidia/l4t-cuda:12.6.11-runtime holds Tegra CUDA 12.6.11 (read from /usr/local/cuda-12.6/version.json, " +
				"/usr/local/cuda-12.6/targets/aarch64-linux), but JetPack 7.0 needs SBSA CUDA: JetPack 7 and later run NVIDIA's arm64 server (SBSA) CUDA, " +
				"and Tegra CUDA images belong to JetPack 6 and earlier; use an SBSA base such as nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04"},
		{name: "an SBSA base for JetPack 6, the same CUDA",
			got:  Info{Flavour: computecap.FlavourSBSA, CUDA: "12.6.3", From: fromTargets(computecap.FlavourSBSA, "usr/local/cuda-12.6")},
			need: jp62("build", "nvcr.io/nvidia/l4t-jetpack:r36.4.0"),
			want: "build base nvcr.io/nvidia/l4t-jetpack:r36.4.0 holds SBSA CUDA 12.6.3 (read from /usr/local/cuda-12.6/version.json, " +
				"/usr/local/cuda-12.6/targets/sbsa-linux), but JetPack 6.2 needs Tegra CUDA: an SBSA CUDA build does not run on the Tegra GPU driver " +
				"of JetPack 6 and earlier; use a Tegra base"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.got.Check(tt.need)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			var me *MismatchError
			require.ErrorAs(t, err, &me)
			require.Equal(t, tt.want, err.Error())
		})
	}
}
