package baseinfo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// The layouts of NVIDIA's images and what derived images do to them.
func TestReadImage(t *testing.T) {
	tegraTree := []entry{
		dir("usr/local/cuda-12.6"), file("usr/local/cuda-12.6/version.json", versionJSON("12.6.68")),
		dir("usr/local/cuda-12.6/targets/aarch64-linux/lib"), link("usr/local/cuda", "cuda-12.6"),
	}
	sbsaTree := func(v string) []entry {
		mm := v[:strings.LastIndexByte(v, '.')]
		return []entry{
			link("etc/alternatives/cuda", "/usr/local/cuda-"+mm),
			dir("usr/local/cuda-" + mm + "/targets/sbsa-linux/lib"),
			file("usr/local/cuda-"+mm+"/version.json", versionJSON(v)),
			link("usr/local/cuda", "/etc/alternatives/cuda"),
		}
	}
	tests := []struct {
		name   string
		env    []string
		layers [][]entry
		want   Info
	}{
		{name: "l4t-jetpack: Tegra tree and nv_tegra_release",
			layers: [][]entry{append([]entry{file("etc/nv_tegra_release", tegraLine)}, tegraTree...)},
			want: Info{Flavour: computecap.FlavourTegra, CUDA: "12.6.68", L4T: "36.4.0",
				From: []string{"/usr/local/cuda-12.6/version.json", "/usr/local/cuda-12.6/targets/aarch64-linux"}}},
		{name: "nvidia/cuda: SBSA through /etc/alternatives", env: []string{"CUDA_VERSION=13.0.1"},
			layers: [][]entry{{file("etc/os-release", "ubuntu")}, sbsaTree("13.0.1")},
			want: Info{Flavour: computecap.FlavourSBSA, CUDA: "13.0.1",
				From: []string{"/usr/local/cuda-13.0/version.json", "/usr/local/cuda-13.0/targets/sbsa-linux"}}},
		{name: "a runtime image without version.json: the config's CUDA_VERSION",
			env:    []string{"PATH=/usr/bin", "CUDA_VERSION=12.6.11"},
			layers: [][]entry{{dir("usr/local/cuda-12.6/targets/aarch64-linux/lib"), link("usr/local/cuda", "cuda-12.6")}},
			want: Info{Flavour: computecap.FlavourTegra, CUDA: "12.6.11",
				From: []string{"config: CUDA_VERSION", "/usr/local/cuda-12.6/targets/aarch64-linux"}}},
		{name: "version.json wins over CUDA_VERSION", env: []string{"CUDA_VERSION=12.6"},
			layers: [][]entry{{dir("usr/local/cuda-12.2/targets/aarch64-linux"), file("usr/local/cuda-12.2/version.json", versionJSON("12.2.140")),
				link("usr/local/cuda", "cuda-12.2")}},
			want: Info{Flavour: computecap.FlavourTegra, CUDA: "12.2.140",
				From: []string{"/usr/local/cuda-12.2/version.json", "/usr/local/cuda-12.2/targets/aarch64-linux"}}},
		{name: "an upper layer points /usr/local/cuda at another tree",
			layers: [][]entry{tegraTree, {dir("usr/local/cuda-13.0/targets/sbsa-linux"), file("usr/local/cuda-13.0/version.json", versionJSON("13.0.1")),
				link("usr/local/cuda", "cuda-13.0")}},
			want: Info{Flavour: computecap.FlavourSBSA, CUDA: "13.0.1",
				From: []string{"/usr/local/cuda-13.0/version.json", "/usr/local/cuda-13.0/targets/sbsa-linux"}}},
		{name: "whiteouts remove the CUDA", env: []string{"PATH=/usr/bin"},
			layers: [][]entry{append([]entry{file("etc/nv_tegra_release", tegraLine)}, tegraTree...),
				{file("usr/local/.wh.cuda", ""), file("usr/local/.wh.cuda-12.6", "")}},
			want: Info{Flavour: computecap.FlavourTegra, L4T: "36.4.0", From: []string{"/etc/nv_tegra_release"}}},
		{name: "an opaque /usr/local hides the lower tree",
			layers: [][]entry{tegraTree, append([]entry{dir("usr/local"), file("usr/local/.wh..wh..opq", "")}, sbsaTree("13.2.0")...)},
			want: Info{Flavour: computecap.FlavourSBSA, CUDA: "13.2.0",
				From: []string{"/usr/local/cuda-13.2/version.json", "/usr/local/cuda-13.2/targets/sbsa-linux"}}},
		{name: "a plain /usr/local/cuda folder with version.json only",
			layers: [][]entry{{dir("usr/local/cuda"), file("usr/local/cuda/version.json", versionJSON("12.6"))}},
			want:   Info{CUDA: "12.6", From: []string{"/usr/local/cuda/version.json"}}},
		{name: "no /usr/local/cuda: the one tree there is",
			layers: [][]entry{{dir("usr/local/cuda-11.4/targets/aarch64-linux"), file("usr/local/cuda-11.4/version.json", versionJSON("11.4.315"))}},
			want: Info{Flavour: computecap.FlavourTegra, CUDA: "11.4.315",
				From: []string{"/usr/local/cuda-11.4/version.json", "/usr/local/cuda-11.4/targets/aarch64-linux"}}},
		{name: "l4t-base: nv_tegra_release, no CUDA",
			layers: [][]entry{{file("./etc/nv_tegra_release", tegraLine)}},
			want:   Info{Flavour: computecap.FlavourTegra, L4T: "36.4.0", From: []string{"/etc/nv_tegra_release"}}},
		{name: "both targets folders: no flavour",
			layers: [][]entry{{dir("usr/local/cuda-12.6/targets/aarch64-linux"), dir("usr/local/cuda-12.6/targets/sbsa-linux"),
				file("usr/local/cuda-12.6/version.json", versionJSON("12.6.3")), link("usr/local/cuda", "cuda-12.6")}},
			want: Info{CUDA: "12.6.3", From: []string{"/usr/local/cuda-12.6/version.json",
				"/usr/local/cuda-12.6/targets/aarch64-linux", "/usr/local/cuda-12.6/targets/sbsa-linux"}}},
		{name: "nothing of CUDA", layers: [][]entry{{file("bin/sh", "#!")}}, want: Info{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadImage(testImage(t, tt.env, tt.layers...), DefaultLimit)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestReadImageErrors(t *testing.T) {
	tree := func(body string) []entry {
		return []entry{dir("usr/local/cuda-12.6/targets/aarch64-linux"), file("usr/local/cuda-12.6/version.json", body),
			link("usr/local/cuda", "cuda-12.6")}
	}
	for name, tt := range map[string]struct {
		env     []string
		entries []entry
		want    string
	}{
		"version.json not JSON":      {entries: tree("{"), want: "/usr/local/cuda-12.6/version.json: not CUDA's version.json"},
		"version.json without cuda":  {entries: tree(`{"nvcc": {}}`), want: `no "cuda": {"version": ...} entry`},
		"version.json bad version":   {entries: tree(`{"cuda": {"version": "twelve"}}`), want: `"cuda" version: CUDA version "twelve"`},
		"version.json too large":     {entries: tree(strings.Repeat(" ", maxVersionJSON+1)), want: "larger than 256 KiB"},
		"nv_tegra_release too large": {entries: []entry{file("etc/nv_tegra_release", strings.Repeat("#", maxTegraRelease+1))}, want: "/etc/nv_tegra_release is larger"},
		"bad CUDA_VERSION":           {env: []string{"CUDA_VERSION=latest"}, entries: []entry{file("bin/sh", "")}, want: "config: CUDA_VERSION"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadImage(testImage(t, tt.env, tt.entries), DefaultLimit)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// The read stops as soon as the CUDA in use is found: a lower layer that
// is not even a tar stream is never reached. Without the markers above it,
// it is, and its error names the layers.
func TestReadImageStopsEarly(t *testing.T) {
	broken := rawLayer(t, []byte(strings.Repeat("not a tar stream ", 100)))
	found := rawLayer(t, tarBytes(t, link("usr/local/cuda", "cuda-13.0"), dir("usr/local/cuda-13.0/targets/sbsa-linux"),
		file("usr/local/cuda-13.0/version.json", versionJSON("13.0.1"))))
	got, err := ReadImage(imageOf(t, nil, broken, found), DefaultLimit)
	require.NoError(t, err)
	require.Equal(t, "SBSA CUDA 13.0.1", got.Describe())

	// Only a link, in the upper layer: the scan goes on down and fails there.
	onlyLink := rawLayer(t, tarBytes(t, link("usr/local/cuda", "cuda-13.0")))
	_, err = ReadImage(imageOf(t, nil, broken, onlyLink), DefaultLimit)
	require.ErrorContains(t, err, "read the layers")
}

// A read goes through at most its limit of file content, then says what
// it found so far.
func TestReadImageLimit(t *testing.T) {
	img := testImage(t, []string{"CUDA_VERSION=12.6.11"},
		[]entry{dir("usr/local/cuda-12.6/targets/aarch64-linux"), link("usr/local/cuda", "cuda-12.6")},
		[]entry{file("usr/share/big", strings.Repeat("x", 4096))})
	got, err := ReadImage(img, 1024)
	require.NoError(t, err)
	require.True(t, got.Partial)
	require.Equal(t, "CUDA 12.6.11 of no known flavour", got.Describe())
	got, err = ReadImage(img, DefaultLimit)
	require.NoError(t, err)
	require.False(t, got.Partial)
	require.Equal(t, "Tegra CUDA 12.6.11", got.Describe())
}

// A tree's many library links do not crowd out the links on the way to it.
func TestReadImageManyLinks(t *testing.T) {
	var libs []entry
	for i := range 3 * maxLinks {
		libs = append(libs, link(fmt.Sprintf("usr/local/cuda-13.0/targets/sbsa-linux/lib/libx%d.so", i), "libx.so.13"))
	}
	img := testImage(t, nil, []entry{link("usr/local/cuda", "/etc/alternatives/cuda"), link("etc/alternatives/cuda", "/usr/local/cuda-13.0")},
		append(libs, file("usr/local/cuda-13.0/version.json", versionJSON("13.0.1")), dir("usr/local/cuda-12.6/targets/aarch64-linux")))
	got, err := ReadImage(img, DefaultLimit)
	require.NoError(t, err)
	require.Equal(t, "SBSA CUDA 13.0.1", got.Describe())
}

// A chain of links longer than the scan follows is not taken for a tree.
func TestReadImageLinkLoop(t *testing.T) {
	img := testImage(t, nil, []entry{link("usr/local/cuda", "cuda-a"), link("usr/local/cuda-a", "cuda"),
		dir("usr/local/cuda-12.6/targets/aarch64-linux"), dir("usr/local/cuda-13.0/targets/sbsa-linux")})
	got, err := ReadImage(img, DefaultLimit)
	require.NoError(t, err)
	require.Equal(t, Info{}, got)
}

func TestDescribe(t *testing.T) {
	require.Equal(t, "Tegra CUDA 12.6.3", Info{Flavour: computecap.FlavourTegra, CUDA: "12.6.3"}.Describe())
	require.Equal(t, "CUDA 12.6 of no known flavour", Info{CUDA: "12.6"}.Describe())
	require.Equal(t, "Tegra without CUDA", Info{Flavour: computecap.FlavourTegra}.Describe())
	require.Equal(t, "no CUDA", Info{}.Describe())
	v, ok := Info{CUDA: "12.6.3"}.CUDAVersion()
	require.True(t, ok)
	require.Equal(t, computecap.CUDAVersion{Major: 12, Minor: 6}, v)
	_, ok = Info{}.CUDAVersion()
	require.False(t, ok)
	require.True(t, Info{CUDA: "1.0", Digest: "a"}.Same(Info{CUDA: "1.0", Digest: "b"}))
	require.False(t, Info{CUDA: "1.0"}.Same(Info{CUDA: "1.0", Flavour: computecap.FlavourSBSA}))
}
