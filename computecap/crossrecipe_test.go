package computecap

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every non-preview JetPack release of a line with a recipe gets the
// recipe's arguments from the table: a devel image of its CUDA and its
// Ubuntu, its flavour's cross package and the row's suite and GCC; a line
// without one says why, naming the Ubuntu NVIDIA supports.
func TestRecipeArgsCoverEveryRelease(t *testing.T) {
	tbl := DefaultTable()
	for _, r := range tbl.JetPacks {
		if r.Preview {
			continue
		}
		row, ok := tbl.CrossRecipeOf(r.JetPack)
		require.True(t, ok, "JetPack %s has no cross recipe row", r.JetPack)
		require.Equal(t, r.Ubuntu, row.Ubuntu, "JetPack %s", r.JetPack)
		args, err := tbl.RecipeArgs(r.JetPack, r.CUDA)
		if row.Unsupported != "" {
			require.ErrorContains(t, err, "only on an Ubuntu 22.04 host")
			continue
		}
		require.NoError(t, err, "JetPack %s", r.JetPack)
		require.True(t, strings.HasSuffix(args[RecipeArgDevelImage], "-devel-ubuntu"+r.Ubuntu), args[RecipeArgDevelImage])
		require.Contains(t, args[RecipeArgDevelImage], ":"+r.CUDA.String()+".")
		target, _ := tbl.CrossTargetOf(r.Flavour)
		require.Equal(t, target.PackageFor(r.CUDA), args[RecipeArgCrossPackage])
		require.Contains(t, args[RecipeArgCrossRepo], "/ubuntu"+strings.ReplaceAll(r.Ubuntu, ".", "")+"/cross-linux-")
		require.NotEmpty(t, args[RecipeArgCodename])
		require.NotEmpty(t, args[RecipeArgGCC])
	}
	args, err := tbl.RecipeArgs("6.2", CUDAVersion{Major: 12, Minor: 6})
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		RecipeArgDevelImage: "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04", RecipeArgCodename: "jammy",
		RecipeArgCrossRepo:    "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/cross-linux-aarch64",
		RecipeArgCrossPackage: "cuda-cross-aarch64-12-6", RecipeArgGCC: "11",
	}, args)
	_, err = tbl.RecipeArgs("7.0", CUDAVersion{Major: 12, Minor: 9})
	require.ErrorContains(t, err, "knows no NVIDIA CUDA 12.9 devel image for Ubuntu 24.04")
}
