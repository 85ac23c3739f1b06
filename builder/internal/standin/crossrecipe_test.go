package standin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"
	"github.com/tonistiigi/fsutil"

	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// recipeArgs62 are the recipe's arguments of JetPack 6.2's row of the
// table of facts (CUDA 12.6 on Ubuntu 22.04; the recipe's defaults).
var recipeArgs62 = map[string]string{"CUDA_DEVEL_IMAGE": "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04",
	"UBUNTU_CODENAME": "jammy", "CUDA_CROSS_PACKAGE": "cuda-cross-aarch64-12-6", "CROSS_GCC": "11"}

// buildRecipe builds dockerfiles/Dockerfile-cross-base with the buildkitd
// of conn, as a user's build does, with args, the bed's devel image and
// repositories, and pushes the result to ref. It returns the RUN steps'
// output.
func buildRecipe(t *testing.T, conn *daemon.Connection, args map[string]string, served RecipeServed, ref string) (string, error) {
	t.Helper()
	attrs := map[string]string{"filename": "Dockerfile-cross-base", "platform": "linux/amd64"}
	for k, v := range args {
		attrs["build-arg:"+k] = v
	}
	attrs["build-arg:CUDA_DEVEL_IMAGE"] = served.DevelImage
	for k, v := range served.BuildArgs {
		attrs["build-arg:"+k] = v
	}
	dir, err := filepath.Abs("../../../dockerfiles")
	require.NoError(t, err)
	fs, err := fsutil.NewFS(dir)
	require.NoError(t, err)
	ch := make(chan *client.SolveStatus)
	var logs bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range ch {
			for _, l := range s.Logs {
				logs.Write(l.Data)
			}
		}
	}()
	_, err = conn.Client.Solve(t.Context(), nil, client.SolveOpt{Frontend: "dockerfile.v0", FrontendAttrs: attrs,
		LocalMounts: map[string]fsutil.FS{"context": fs, "dockerfile": fs},
		Exports: []client.ExportEntry{{Type: client.ExporterImage,
			Attrs: map[string]string{"name": ref, "push": "true", "registry.insecure": "true"}}}}, ch)
	<-done
	return logs.String(), err
}

// The recipe of the cross build base, built by a real buildkitd with only
// the repositories' addresses swapped, as the repositories of a user's
// build can fail: its RUN line reaches the test bed's repositories on
// 127.0.0.1 (buildkitd's runc worker runs RUN steps in the host's network
// namespace: no CNI configuration), and apt refuses a ports archive signed
// with another key than the devel image's keyring holds, or one without
// OpenSSL, in its own words. The test bed refuses a CROSS_GCC its archive
// does not carry. (The recipe's successful build is the e2e cross case's.)
func TestCrossRecipe(t *testing.T) {
	k := realKit(t)
	_, err := nvrealFind(k)
	require.NoError(t, err)
	host := testregistry.New(t)
	conn, err := daemon.Connect(t.Context(), daemon.WithBuildkitd(filepath.Join(k.Source, "bin", "buildkitd")),
		daemon.WithStateDir(filepath.Join(t.TempDir(), "buildkitd")))
	require.NoError(t, err, "run 'make deps': it builds bin/buildkitd")
	defer conn.Close()
	gcc12 := map[string]string{"CUDA_DEVEL_IMAGE": recipeArgs62["CUDA_DEVEL_IMAGE"], "CROSS_GCC": "12"}
	_, err = k.CrossRecipeBed(t.Context(), host, []RecipeRelease{{Name: "gcc12", Args: gcc12}})
	require.ErrorContains(t, err, "release gcc12: the test bed's jammy packages")
	require.ErrorContains(t, err, "have no gcc-12-aarch64-linux-gnu: CROSS_GCC 12 is not the cross compiler the stand-in archive carries")
	start := time.Now()
	bed, err := k.CrossRecipeBed(t.Context(), host, []RecipeRelease{{Name: "jetpack6.2", Args: recipeArgs62},
		{Name: "wrong-key", Args: recipeArgs62, Fault: FaultPortsWrongKey}, {Name: "no-ssl", Args: recipeArgs62, Fault: FaultPortsNoSSL}})
	require.NoError(t, err)
	defer bed.Close()
	t.Logf("CrossRecipeBed: %s", time.Since(start).Round(time.Second))
	served := bed.Releases["jetpack6.2"]
	require.Equal(t, host+"/nvidia/cuda:12.6.3-devel-ubuntu22.04", served.DevelImage)
	require.True(t, strings.HasPrefix(served.BuildArgs["UBUNTU_PORTS"], "http://127.0.0.1:"), served.BuildArgs)

	// The recipe's successful build, and Dockerfile-jetson's router stage
	// in its result, run in the e2e cross case (jetbake builds the shipped
	// matrix's recipe there, JetPack 6.2's and 7.0's rows): here only the
	// ways a user's repositories fail.
	logs, err := buildRecipe(t, conn, recipeArgs62, bed.Releases["wrong-key"], host+"/jetbake/cross-build-base:wrong-key")
	require.Error(t, err)
	ports := bed.Releases["wrong-key"].BuildArgs["UBUNTU_PORTS"]
	require.Contains(t, logs, "E: The repository '"+ports+" jammy InRelease' is not signed.", logs)
	require.Contains(t, logs, "NO_PUBKEY", logs)
	require.Contains(t, err.Error(), "exit code: 100", err.Error())

	logs, err = buildRecipe(t, conn, recipeArgs62, bed.Releases["no-ssl"], host+"/jetbake/cross-build-base:no-ssl")
	require.Error(t, err)
	require.Contains(t, logs, "E: Unable to locate package libssl-dev:arm64", logs)
	require.Contains(t, err.Error(), "exit code: 100", err.Error())
}

// nvrealFind says whether `make deps` fetched NVIDIA's CUDA 11.8 tools.
func nvrealFind(k Kit) (string, error) {
	_, err := os.Stat(filepath.Join(k.Source, "bin", "deps", "nvidia-cuda-amd64", "usr", "bin", "cuobjdump"))
	return "", err
}

// The recipe's arguments the bed reads, and its sentences for the ones it
// cannot serve.
func TestParseRecipeArgs(t *testing.T) {
	r, err := parseRecipeArgs(recipeArgs62)
	require.NoError(t, err)
	require.Equal(t, recipeRelease{develTag: "12.6.3-devel-ubuntu22.04", cuda: "12.6.3", ubuntu: "22.04", codename: "jammy",
		crossPackage: "cuda-cross-aarch64-12-6", crossArch: "aarch64", gcc: "11"}, r)
	require.True(t, r.base().RealNvcc(), "a Tegra row's devel image carries NVIDIA's nvcc 11.8")
	r, err = parseRecipeArgs(map[string]string{"CUDA_DEVEL_IMAGE": "nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04",
		"UBUNTU_CODENAME": "noble", "CUDA_CROSS_PACKAGE": "cuda-cross-sbsa-13-0", "CROSS_GCC": "13"})
	require.NoError(t, err)
	require.Equal(t, "sbsa", r.crossArch)
	require.False(t, r.base().RealNvcc())
	for args, want := range map[[2]string]string{
		{"nvcr.io/nvidia/cuda", ""}:                                           `CUDA_DEVEL_IMAGE "nvcr.io/nvidia/cuda" has no tag`,
		{"nvcr.io/nvidia/cuda:12.6.3-runtime-ubuntu22.04", ""}:                "is not an nvidia/cuda devel image",
		{"nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04", "cuda-toolkit-12-6"}: `CUDA_CROSS_PACKAGE "cuda-toolkit-12-6" is not an NVIDIA cross package`,
	} {
		_, err := parseRecipeArgs(map[string]string{"CUDA_DEVEL_IMAGE": args[0], "CUDA_CROSS_PACKAGE": args[1]})
		require.ErrorContains(t, err, want)
	}
	_, err = Kit{Source: t.TempDir()}.recipeDeps("jammy")
	require.ErrorContains(t, err, "run 'make deps' as root")
}
