package lock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

// jetpack62 is a release with its needs: Tegra CUDA 12.6.
func jetpack62() *plan.Plan {
	return &plan.Plan{Releases: []plan.Release{{Name: "jetpack6.2", JetPack: "6.2", CUDA: "12.6", Flavour: computecap.FlavourTegra,
		BuildBase: jetpackBase, RuntimeBase: l4tCUDABase}}}
}

// lock --check notices a base whose contents changed flavour under the
// same tag, and says what it held and what it holds.
func TestCheckContentsChangedFlavour(t *testing.T) {
	host := testregistry.New(t)
	p := jetpack62()
	pushBase(t, host, jetpackBase, computecap.FlavourTegra, "12.6.68")
	was := pushBase(t, host, l4tCUDABase, computecap.FlavourTegra, "12.6.11")
	f, err := Resolve(t.Context(), p, mirrorTo(host))
	require.NoError(t, err)
	require.Equal(t, "Tegra CUDA 12.6.11", f.Contents[l4tCUDABase].Describe())
	require.NoError(t, f.Check(t.Context(), p, mirrorTo(host)))

	now := pushBase(t, host, l4tCUDABase, computecap.FlavourSBSA, "12.6.11")
	err = f.Check(t.Context(), p, mirrorTo(host))
	require.EqualError(t, err, "the lock file is stale: "+l4tCUDABase+" moved from "+was+" to "+now+
		", and what it holds changed from Tegra CUDA 12.6.11 to SBSA CUDA 12.6.11; run 'jetbake lock' to pin the new digests after checking them")

	// A new digest with the same contents is only a move.
	pushBase(t, host, l4tCUDABase, computecap.FlavourTegra, "12.6.11")
	err = f.Check(t.Context(), p, mirrorTo(host))
	require.ErrorContains(t, err, l4tCUDABase+" moved from "+was)
	require.NotContains(t, err.Error(), "what it holds changed")

	// And the CUDA version under the same tag.
	pushBase(t, host, l4tCUDABase, computecap.FlavourTegra, "12.2.12")
	err = f.Check(t.Context(), p, mirrorTo(host))
	require.ErrorContains(t, err, "what it holds changed from Tegra CUDA 12.6.11 to Tegra CUDA 12.2.12")

	// 'jetbake lock' refuses to pin it for a CUDA 12.6 release.
	_, err = Resolve(t.Context(), p, mirrorTo(host))
	require.ErrorContains(t, err, "release jetpack6.2: runtime base "+l4tCUDABase+" holds Tegra CUDA 12.2.12 (read from /usr/local/cuda-12.2/version.json, "+
		"/usr/local/cuda-12.2/targets/aarch64-linux), but the release's cuda is 12.6")
	require.ErrorContains(t, err, "nothing was written")
}

// Resolve refuses a base of the wrong flavour for its release, naming both.
func TestResolveRefusesWrongFlavour(t *testing.T) {
	host := testregistry.New(t)
	pushBase(t, host, jetpackBase, computecap.FlavourSBSA, "12.6.3")
	pushBase(t, host, l4tCUDABase, computecap.FlavourTegra, "12.6.11")
	_, err := Resolve(t.Context(), jetpack62(), mirrorTo(host))
	require.ErrorContains(t, err, "release jetpack6.2: build base "+jetpackBase+" holds SBSA CUDA 12.6.3")
	require.ErrorContains(t, err, "but JetPack 6.2 needs Tegra CUDA")
	require.NotContains(t, err.Error(), "runtime base")
}

// A lock file written before jetbake read bases reads fine, checks by
// digest only, and gets its contents at the next lock.
func TestOldLockFile(t *testing.T) {
	host := testregistry.New(t)
	p := jetpack62()
	jp := pushBase(t, host, jetpackBase, computecap.FlavourTegra, "12.6.68")
	rt := pushBase(t, host, l4tCUDABase, computecap.FlavourTegra, "12.6.11")
	path := filepath.Join(t.TempDir(), DefaultFile)
	old := `{"schema_version": 1, "bases": {"` + jetpackBase + `": "` + jp + `", "` + l4tCUDABase + `": "` + rt + `"}}`
	require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
	f, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, f.Contents)
	require.Equal(t, []string{l4tCUDABase, jetpackBase}, f.MissingContents(p))
	require.Empty(t, f.Known())
	require.NoError(t, f.Check(t.Context(), p, mirrorTo(host)))

	moved := pushBase(t, host, l4tCUDABase, computecap.FlavourSBSA, "12.6.11")
	err = f.Check(t.Context(), p, mirrorTo(host))
	require.ErrorContains(t, err, l4tCUDABase+" moved from "+rt+" to "+moved+"; run 'jetbake lock'")

	pushBase(t, host, l4tCUDABase, computecap.FlavourTegra, "12.6.11")
	f, err = Resolve(t.Context(), p, mirrorTo(host))
	require.NoError(t, err)
	require.NoError(t, f.Write(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"contents"`)
	require.Contains(t, string(data), `"flavour": "tegra"`)
	back, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, f, back)
	require.Empty(t, back.MissingContents(p))
	require.Len(t, back.Known(), 2)
}

func TestKnown(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	f := &File{SchemaVersion: 1, Bases: map[string]string{jetpackBase: d("a"), l4tCUDABase: d("b")},
		Contents: map[string]baseinfo.Info{
			jetpackBase: {Digest: d("a"), Flavour: computecap.FlavourTegra, CUDA: "12.6.68"},
			l4tCUDABase: {Digest: d("c"), Flavour: computecap.FlavourTegra, CUDA: "12.6.11"}, // read at another digest
		}}
	require.Equal(t, map[string]baseinfo.Info{jetpackBase: f.Contents[jetpackBase]}, f.Known())
}

func TestReadRefusesBadContents(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	for name, tt := range map[string]struct{ contents, want string }{
		"digest":  {`{"digest": "sha256:abc"}`, `contents["x:1"].digest: "sha256:abc": is not a digest`},
		"flavour": {`{"digest": "` + digest + `", "flavour": "x86"}`, `contents["x:1"].flavour: "x86": is not "tegra" or "sbsa"`},
		"cuda":    {`{"digest": "` + digest + `", "cuda": "twelve"}`, `contents["x:1"].cuda: "twelve": is not a CUDA version`},
		"field":   {`{"digest": "` + digest + `", "colour": "blue"}`, `contents["x:1"].colour: unknown field`},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DefaultFile)
			body := `{"schema_version": 1, "bases": {"x:1": "` + digest + `"}, "contents": {"x:1": ` + tt.contents + `}}`
			require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
			_, err := Read(path)
			require.ErrorContains(t, err, tt.want)
			if name != "field" {
				require.ErrorContains(t, err, "jetbake lock")
			}
		})
	}
}
