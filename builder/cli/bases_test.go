package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// The matrix of issue 25: JetPack 6.2 on the generic arm64 (SBSA)
// nvidia/cuda images, JetPack 7.0 running on JetPack 6's l4t-cuda.
// `jetbake validate` refuses each base by name, and the shipped matrix
// still passes (TestValidateAcceptsShippedMatrix).
func TestValidateRefusesBasesOfTheWrongFlavour(t *testing.T) {
	path := matrixCopy(t, func(doc map[string]any) {
		releaseOf(doc, 2)["build_base"] = "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"
		releaseOf(doc, 2)["runtime_base"] = "nvcr.io/nvidia/cuda:12.6.3-runtime-ubuntu22.04"
		releaseOf(doc, 3)["runtime_base"] = "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"
	})
	r := run(t, "validate", "--matrix", path)
	require.Equal(t, 1, r.code)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.Len(t, lines, 3, r.stderr)
	at := regexp.QuoteMeta(path) + `:\d+:\d+: `
	require.Regexp(t, at+regexp.QuoteMeta(`releases[2].build_base: "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04": is an SBSA CUDA image (nvcr.io/nvidia/cuda), `+
		`but JetPack 6.2 needs Tegra CUDA: an SBSA CUDA build does not run on the Tegra GPU driver of JetPack 6 and earlier; `+
		`fix: use a Tegra base that fits, e.g. "nvcr.io/nvidia/l4t-jetpack:r36.4.0"`), lines[0])
	require.Regexp(t, at+regexp.QuoteMeta(`releases[2].runtime_base: "nvcr.io/nvidia/cuda:12.6.3-runtime-ubuntu22.04": is an SBSA CUDA image`), lines[1])
	require.Contains(t, lines[1], `fix: use a Tegra base that fits, e.g. "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"`)
	require.Regexp(t, at+regexp.QuoteMeta(`releases[3].runtime_base: "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime": is a Tegra CUDA image (nvcr.io/nvidia/l4t-cuda), `+
		`but JetPack 7.0 needs SBSA CUDA: JetPack 7 and later run NVIDIA's arm64 server (SBSA) CUDA, and Tegra CUDA images belong to JetPack 6 and earlier; `+
		`fix: use an SBSA base that fits, e.g. "nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04"`), lines[2])
}

// `jetbake plan --format json` shows each base's flavour and CUDA from the
// table, and "unknown until read" for a base the table does not know.
func TestPlanShowsBases(t *testing.T) {
	path := matrixCopy(t, func(doc map[string]any) {
		releaseOf(doc, 2)["runtime_base"] = "ghcr.io/acme/jetson-runtime:latest"
	})
	r := run(t, "plan", "--matrix", path, "--format", "json", "--release", "jetpack6.2")
	require.Equal(t, 0, r.code, r.stderr)
	var p plan.Plan
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &p))
	require.Equal(t, []plan.Base{
		{Role: "build", Ref: "nvcr.io/nvidia/l4t-jetpack:r36.4.0", Flavour: "tegra", CUDA: "12.6", From: "table"},
		{Role: "runtime", Ref: "ghcr.io/acme/jetson-runtime:latest", Flavour: "unknown until read", CUDA: "unknown until read", From: "read at build"},
	}, p.Releases[0].Bases)
	require.Equal(t, "tegra", string(p.Releases[0].Flavour))

	r = run(t, "plan", "--matrix", path, "--release", "jetpack6.2")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "  build base:   nvcr.io/nvidia/l4t-jetpack:r36.4.0 (Tegra CUDA 12.6, from the table)\n")
	require.Contains(t, r.stdout, "  runtime base: ghcr.io/acme/jetson-runtime:latest (flavour and CUDA unknown until read)\n")
}

// pushShippedBases pushes, for every base of the shipped matrix, an image
// holding its release's CUDA of its flavour to host.
func pushShippedBases(t *testing.T, host string) {
	t.Helper()
	m, err := matrix.Load(matrixCopy(t, nil))
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	pushed := map[string]bool{}
	for _, r := range p.Releases {
		for _, ref := range []string{r.BuildBase, r.RuntimeBase} {
			testregistry.Push(t, host, ref, testregistry.CUDAImage(t, r.Flavour.TargetDir(), r.CUDA+".1"))
			pushed[ref] = true
		}
	}
	// The recipe's FROM images that are no release's base: NVIDIA's amd64
	// CUDA devel images (the multi-arch 13.x ones are JetPack 7's build bases).
	for _, r := range p.Releases {
		if ref := r.CrossBuildBase; ref != "" && !pushed[ref] {
			img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64"})
			require.NoError(t, err)
			testregistry.Push(t, host, ref, img)
			pushed[ref] = true
		}
	}
}

// `jetbake lock` prints what each base holds; `lock --check` on a lock
// file written before jetbake read bases passes, and says how to record
// them.
func TestLockRecordsContents(t *testing.T) {
	host := testregistry.New(t)
	pushShippedBases(t, host)
	// A local router: the shipped git context would be resolved on github.com.
	path := matrixCopy(t, func(doc map[string]any) { doc["router"].(map[string]any)["context"] = "." })
	r := run(t, "lock", "--matrix", path, "--mirror", "nvcr.io="+host)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^nvcr\.io/nvidia/l4t-cuda:12\.6\.11-runtime@sha256:[0-9a-f]{64}  Tegra CUDA 12\.6\.1$`, r.stdout)
	require.Regexp(t, `(?m)^nvcr\.io/nvidia/cuda:13\.0\.1-devel-ubuntu24\.04@sha256:[0-9a-f]{64}  SBSA CUDA 13\.0\.1$`, r.stdout)
	lockFile := filepath.Join(filepath.Dir(path), lock.DefaultFile)
	lf, err := lock.Read(lockFile)
	require.NoError(t, err)
	require.Len(t, lf.Contents, 8)

	r = run(t, "lock", "--check", "--matrix", path, "--mirror", "nvcr.io="+host)
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)

	lf.Contents = nil
	require.NoError(t, lf.Write(lockFile))
	r = run(t, "lock", "--check", "--matrix", path, "--mirror", "nvcr.io="+host)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "9 bases, none moved", "the recipe's FROM image, nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04, is pinned too")
	require.Contains(t, r.stderr, "records no contents for 8 bases (written before jetbake read bases): run 'jetbake lock' to record their CUDA flavour and version")
}
