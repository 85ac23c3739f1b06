package computecap_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

func TestSplitImageRef(t *testing.T) {
	for _, tt := range []struct{ ref, repo, tag string }{
		{"nvcr.io/nvidia/l4t-jetpack:r36.4.0", "nvcr.io/nvidia/l4t-jetpack", "r36.4.0"},
		{"nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04@sha256:abc", "nvcr.io/nvidia/cuda", "13.0.1-devel-ubuntu24.04"},
		{"nvcr.io/nvidia/cuda@sha256:abc", "nvcr.io/nvidia/cuda", ""},
		{"nvidia/cuda:12.6.3-runtime-ubuntu22.04", "docker.io/nvidia/cuda", "12.6.3-runtime-ubuntu22.04"},
		{"index.docker.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04", "docker.io/nvidia/cuda", "13.0.1-runtime-ubuntu24.04"},
		{"ubuntu:24.04", "docker.io/library/ubuntu", "24.04"},
		{"localhost:5000/nvidia/cuda:13.0.1", "localhost:5000/nvidia/cuda", "13.0.1"},
		{"127.0.0.1:5000/nvidia/l4t-cuda", "127.0.0.1:5000/nvidia/l4t-cuda", ""},
	} {
		repo, tag := computecap.SplitImageRef(tt.ref)
		require.Equal(t, tt.repo, repo, tt.ref)
		require.Equal(t, tt.tag, tag, tt.ref)
	}
}

// Every known base repository has a flavour, and the tags say which CUDA.
func TestBaseFactsOf(t *testing.T) {
	tab := computecap.DefaultTable()
	v := func(major, minor int) computecap.CUDAVersion {
		return computecap.CUDAVersion{Major: major, Minor: minor}
	}
	for _, tt := range []struct {
		ref     string
		flavour computecap.Flavour
		cuda    computecap.CUDAVersion
		noCUDA  bool
	}{
		{"nvcr.io/nvidia/l4t-jetpack:r36.4.0", computecap.FlavourTegra, v(12, 6), false},
		{"nvcr.io/nvidia/l4t-jetpack:r36.3.0", computecap.FlavourTegra, v(12, 2), false},
		{"nvcr.io/nvidia/l4t-jetpack:r36.2.0", computecap.FlavourTegra, v(12, 2), false},
		{"nvcr.io/nvidia/l4t-jetpack:r35.4.1", computecap.FlavourTegra, v(11, 4), false},
		{"nvcr.io/nvidia/l4t-jetpack:r36.4.0-s001", computecap.FlavourTegra, v(12, 6), false},
		{"nvcr.io/nvidia/l4t-jetpack:latest", computecap.FlavourTegra, computecap.CUDAVersion{}, false},
		{"nvcr.io/nvidia/l4t-cuda:12.6.11-runtime", computecap.FlavourTegra, v(12, 6), false},
		{"nvcr.io/nvidia/l4t-cuda:11.4.19-devel@sha256:0", computecap.FlavourTegra, v(11, 4), false},
		{"nvcr.io/nvidia/l4t-base:r36.2.0", computecap.FlavourTegra, computecap.CUDAVersion{}, true},
		{"nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04", computecap.FlavourSBSA, v(12, 6), false},
		{"nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04", computecap.FlavourSBSA, v(13, 0), false},
		{"nvidia/cuda:13.2.0-runtime-ubuntu24.04", computecap.FlavourSBSA, v(13, 2), false},
	} {
		f, ok := tab.BaseFactsOf(tt.ref)
		require.True(t, ok, tt.ref)
		require.Equal(t, tt.flavour, f.Flavour, tt.ref)
		require.Equal(t, tt.cuda, f.CUDA, tt.ref)
		require.Equal(t, tt.noCUDA, f.NoCUDA, tt.ref)
	}
	for _, ref := range []string{"ghcr.io/acme/cuda:12.6", "ubuntu:22.04", "nvcr.io/nvidia/pytorch:24.01-py3"} {
		_, ok := tab.BaseFactsOf(ref)
		require.False(t, ok, ref)
	}
}

// The fixes offer bases of the right flavour and CUDA, build bases with
// the toolkit, runtime bases first for a runtime base.
func TestBasesFitting(t *testing.T) {
	tab := computecap.DefaultTable()
	v := func(major, minor int) computecap.CUDAVersion {
		return computecap.CUDAVersion{Major: major, Minor: minor}
	}
	require.Equal(t, []string{"nvcr.io/nvidia/l4t-jetpack:r36.4.0"}, tab.BasesFitting(computecap.FlavourTegra, v(12, 6), true))
	require.Equal(t, []string{"nvcr.io/nvidia/l4t-cuda:12.6.11-runtime", "nvcr.io/nvidia/l4t-jetpack:r36.4.0"},
		tab.BasesFitting(computecap.FlavourTegra, v(12, 6), false))
	require.Equal(t, "nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04", tab.BasesFitting(computecap.FlavourSBSA, v(13, 0), false)[0])
	require.Equal(t, []string{"nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04"}, tab.BasesFitting(computecap.FlavourSBSA, v(13, 2), true))
	// No known image has CUDA 12.9 in SBSA: the flavour's others come instead.
	other := tab.BasesFitting(computecap.FlavourSBSA, v(12, 9), false)
	require.NotEmpty(t, other)
	for _, ref := range other {
		f, _ := tab.BaseFactsOf(ref)
		require.Equal(t, computecap.FlavourSBSA, f.Flavour)
	}
	// Every JetPack release of the table has a base of its flavour to offer.
	for _, r := range tab.Releases() {
		require.NotEmpty(t, tab.BasesFitting(r.Flavour, r.CUDA, true), r.JetPack)
		require.NotEmpty(t, tab.BasesFitting(r.Flavour, r.CUDA, false), r.JetPack)
	}
}

func TestFlavourOfJetPack(t *testing.T) {
	tab := computecap.DefaultTable()
	for jp, want := range map[string]computecap.Flavour{
		"5.1.2": computecap.FlavourTegra, "6.2": computecap.FlavourTegra, "6.2.1": computecap.FlavourTegra,
		"7.0": computecap.FlavourSBSA, "7.2": computecap.FlavourSBSA,
	} {
		got, ok := tab.FlavourOfJetPack(jp)
		require.True(t, ok, jp)
		require.Equal(t, want, got, jp)
	}
	_, ok := tab.FlavourOfJetPack("9.9")
	require.False(t, ok)
}

func TestFlavourTargets(t *testing.T) {
	for name, want := range map[string]computecap.Flavour{"aarch64-linux": computecap.FlavourTegra, "sbsa-linux": computecap.FlavourSBSA} {
		f, ok := computecap.FlavourOfTarget(name)
		require.True(t, ok)
		require.Equal(t, want, f)
		require.Equal(t, "targets/"+name, f.TargetDir())
	}
	_, ok := computecap.FlavourOfTarget("x86_64-linux")
	require.False(t, ok)
	require.Equal(t, "Tegra", computecap.FlavourTegra.Name())
	require.Equal(t, "SBSA", computecap.FlavourSBSA.Name())
	require.Equal(t, "an SBSA", computecap.FlavourSBSA.WithArticle())
	require.Equal(t, "a Tegra", computecap.FlavourTegra.WithArticle())
	require.Contains(t, computecap.FlavourMismatch(computecap.FlavourSBSA, computecap.FlavourTegra), "Tegra GPU driver")
	require.Contains(t, computecap.FlavourMismatch(computecap.FlavourTegra, computecap.FlavourSBSA), "JetPack 7")
}

// The base rows are copied with the table.
func TestBaseRowsAreCopied(t *testing.T) {
	tab := computecap.DefaultTable()
	tab.BaseRepositories[0].Flavour = computecap.FlavourSBSA
	tab.BaseImages[0].Ref = "changed"
	fresh := computecap.DefaultTable()
	require.Equal(t, computecap.FlavourTegra, fresh.BaseRepositories[0].Flavour)
	require.NotEqual(t, "changed", fresh.BaseImages[0].Ref)
}
