package computecap

import (
	"fmt"
	"strings"
)

// CrossRecipe is how the recipe of a cross build base
// (dockerfiles/Dockerfile-cross-base) builds one JetPack line's base on an
// x86_64 machine: from NVIDIA's amd64 CUDA devel image of the release's
// CUDA and Ubuntu, with NVIDIA's cross repository for that Ubuntu and the
// cross compiler of that Ubuntu. A line NVIDIA supports no cross host for
// has Unsupported set and no recipe.
//
// Sources:
//   - CUDA's installation guide, "CUDA Cross-Platform Environment": cross
//     development for arm64-Jetson is supported only on an Ubuntu 22.04
//     host, arm64-SBSA on 20.04, 22.04 and 24.04
//     (https://docs.nvidia.com/cuda/cuda-installation-guide-linux/#cuda-cross-platform-environment);
//   - NVIDIA's CUDA repositories and their package indexes: per Ubuntu
//     release, cross-linux-aarch64 (cuda-cross-aarch64-X-Y, "Architecture:
//     all", targets/aarch64-linux) and cross-linux-sbsa (cuda-cross-sbsa-X-Y,
//     targets/sbsa-linux), signed with the key of NVIDIA's cuda-keyring
//     (https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/cross-linux-aarch64/,
//     .../ubuntu2404/cross-linux-sbsa/);
//   - NVIDIA's CUDA images (nvidia/cuda, the same on nvcr.io): the amd64
//     devel images of each CUDA release and Ubuntu, with nvcc and NVIDIA's
//     apt key installed (https://gitlab.com/nvidia/container-images/cuda);
//     NVIDIA's own Jetson cross images (DALI's docker/Dockerfile.cuda_aarch64.deps)
//     start FROM them with gcc/g++-aarch64-linux-gnu;
//   - Ubuntu's compilers: GCC 11 is Ubuntu 22.04's, GCC 13 is 24.04's
//     (gcc-defaults); nvcc 12.x takes GCC up to 13, 13.x up to 15 (CUDA's
//     installation guide, "Supported Distributions"). Ubuntu's amd64
//     archive carries no arm64 packages: those come from ports.ubuntu.com.
type CrossRecipe struct {
	// Line is the JetPack line: "5", "6", "7".
	Line string `json:"line"`
	// Ubuntu is the release's Ubuntu, which the build machine's image runs:
	// "22.04".
	Ubuntu string `json:"ubuntu"`
	// Codename is that Ubuntu's suite name: "jammy".
	Codename string `json:"codename,omitempty"`
	// GCC is the cross compiler's GCC release: "11".
	GCC string `json:"gcc,omitempty"`
	// Repository is NVIDIA's CUDA cross repository for that Ubuntu.
	Repository string `json:"repository,omitempty"`
	// DevelImages are NVIDIA's amd64 CUDA devel images of the line, one per
	// CUDA release: "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04".
	DevelImages []string `json:"devel_images,omitempty"`
	// Unsupported says why the line has no recipe; "" when it has one.
	Unsupported string `json:"unsupported,omitempty"`
}

// crossRecipeRows are the recipe's rows, one per JetPack line.
func crossRecipeRows() []CrossRecipe {
	const repos = "https://developer.download.nvidia.com/compute/cuda/repos/"
	return []CrossRecipe{
		{Line: "5", Ubuntu: "20.04", Unsupported: "NVIDIA supports cross development for Jetson (arm64-Jetson) only on an Ubuntu 22.04 host, " +
			"and JetPack 5's CUDA 11.4 is built for Ubuntu 20.04, with no cross repository for it (its cross packages came with " +
			"JetPack 5's SDK Manager, from NVIDIA's Jetson repository for x86_64 hosts)"},
		{Line: "6", Ubuntu: "22.04", Codename: "jammy", GCC: "11", Repository: repos + "ubuntu2204/cross-linux-aarch64",
			DevelImages: []string{"nvcr.io/nvidia/cuda:12.2.2-devel-ubuntu22.04", "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"}},
		{Line: "7", Ubuntu: "24.04", Codename: "noble", GCC: "13", Repository: repos + "ubuntu2404/cross-linux-sbsa",
			DevelImages: []string{"nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04", "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04"}},
	}
}

// CrossRecipeOf is the recipe's row of JetPack release jetpack's line;
// false when the table has none.
func (t *Table) CrossRecipeOf(jetpack string) (CrossRecipe, bool) {
	line, _, _ := strings.Cut(jetpack, ".")
	for _, r := range t.CrossRecipes {
		if r.Line == line {
			return r, true
		}
	}
	return CrossRecipe{}, false
}

// DevelImageFor is the row's devel image of CUDA release v; false when the
// row lists none.
func (r CrossRecipe) DevelImageFor(v CUDAVersion) (string, bool) {
	want := fmt.Sprintf(":%d.%d.", v.Major, v.Minor)
	for _, ref := range r.DevelImages {
		if strings.Contains(ref, want) {
			return ref, true
		}
	}
	return "", false
}

// The recipe's build arguments that the table fills in.
const (
	RecipeArgDevelImage   = "CUDA_DEVEL_IMAGE"
	RecipeArgCodename     = "UBUNTU_CODENAME"
	RecipeArgCrossRepo    = "CUDA_CROSS_REPO"
	RecipeArgCrossPackage = "CUDA_CROSS_PACKAGE"
	RecipeArgGCC          = "CROSS_GCC"
)

// RecipeArgs are the recipe's build arguments for a release of JetPack
// jetpack and CUDA cuda, from the table: the devel image, Ubuntu's suite,
// NVIDIA's cross repository and package, and the cross compiler's GCC. An
// error says why the release has none, in words a fix can follow.
func (t *Table) RecipeArgs(jetpack string, cuda CUDAVersion) (map[string]string, error) {
	row, ok := t.CrossRecipeOf(jetpack)
	if !ok {
		return nil, fmt.Errorf("the table of facts has no cross recipe row for JetPack %s", jetpack)
	}
	if row.Unsupported != "" {
		return nil, fmt.Errorf("JetPack %s has no cross build recipe: %s", jetpack, row.Unsupported)
	}
	flavour, ok := t.FlavourOfJetPack(jetpack)
	if !ok {
		return nil, fmt.Errorf("unknown JetPack %s", jetpack)
	}
	target, ok := t.CrossTargetOf(flavour)
	if !ok {
		return nil, fmt.Errorf("the table of facts has no cross target for %s CUDA", flavour.Name())
	}
	image, ok := row.DevelImageFor(cuda)
	if !ok {
		return nil, fmt.Errorf("the table of facts knows no NVIDIA CUDA %s devel image for Ubuntu %s (it knows %s)",
			cuda, row.Ubuntu, strings.Join(row.DevelImages, ", "))
	}
	return map[string]string{
		RecipeArgDevelImage:   image,
		RecipeArgCodename:     row.Codename,
		RecipeArgCrossRepo:    row.Repository,
		RecipeArgCrossPackage: target.PackageFor(cuda),
		RecipeArgGCC:          row.GCC,
	}, nil
}
