package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/e2e"
)

func TestParsePaths(t *testing.T) {
	got, err := parsePaths("cross, qemu")
	require.NoError(t, err)
	require.Equal(t, []string{pathQEMU, pathCross}, got, "the tables' order")
	got, err = parsePaths("cross")
	require.NoError(t, err)
	require.Equal(t, []string{pathCross}, got)
	for _, bad := range []string{"", "native", "qemu,arm64"} {
		_, err := parsePaths(bad)
		require.Error(t, err, bad)
	}
}

// A synthetic release's cross build base is its own, as its build base
// is: on the cross path too, no clone finds another's toolchain built.
func TestSynthesizeCrossBases(t *testing.T) {
	cross := func(image string) map[string]any {
		return map[string]any{"image": image, "platform": "linux/amd64", "cuda": "12.6", "cuda_target": "aarch64-linux"}
	}
	m := map[string]any{"image": map[string]any{}, "releases": []any{
		map[string]any{"name": "jetpack5.1", "build_base": "b51", "cross_build_base": cross("r/cross:51")},
		map[string]any{"name": "jetpack7.2", "build_base": "b72"},
	}}
	synthesize(3)(m)
	rels := m["releases"].([]any)
	require.Len(t, rels, 3)
	c0 := rels[0].(map[string]any)["cross_build_base"].(map[string]any)
	c2 := rels[2].(map[string]any)["cross_build_base"].(map[string]any)
	require.Equal(t, "r/cross:51-s000", c0["image"])
	require.Equal(t, "r/cross:51-s002", c2["image"])
	require.Equal(t, "aarch64-linux", c2["cuda_target"], "the rest of the field is the template's")
	require.NotContains(t, rels[1].(map[string]any), "cross_build_base", "a template without one gives clones without one")
}

// On the cross path bake's router targets pass what jetbake passes
// (imagebuild's routerArgs) and stay linux/arm64: the Dockerfile's
// toolchain-cross stage runs on $BUILDPLATFORM by itself. The runtime
// stage and the runtime target do not change.
func TestBakeFileCross(t *testing.T) {
	p := demoPlan(t)
	for i := range p.Releases {
		p.Releases[i].CrossBuildBase = "nvcr.io/jetbake/tei-cross:" + p.Releases[i].Name
		p.Releases[i].CUDATargetDir = "aarch64-linux"
	}
	in := testInputs()
	in.Cross = true
	bf, _, err := newBakeFile(p, in)
	require.NoError(t, err)
	qemu, _, err := newBakeFile(p, testInputs())
	require.NoError(t, err)
	require.Len(t, bf.Target, len(qemu.Target), "the same targets on both paths")
	rt := bf.Target["jetpack6_2-sm87"]
	require.Equal(t, "toolchain-cross", rt.Args["TOOLCHAIN"])
	require.Equal(t, testRegistry+"/jetbake/tei-cross:jetpack6.2", rt.Args["CROSS_BUILD_BASE"], "the mirror applied, as jetbake's --mirror")
	require.Equal(t, "aarch64-linux", rt.Args["CUDA_TARGET_DIR"])
	require.Equal(t, []string{"linux/arm64"}, rt.Platforms)
	require.Equal(t, qemu.Target["jetpack6_2-sm87"].Args["BUILD_BASE"], rt.Args["BUILD_BASE"])
	require.NotContains(t, qemu.Target["jetpack6_2-sm87"].Args, "TOOLCHAIN", "the QEMU path passes none")
	require.NotContains(t, bf.Target["jetpack6_2-runtime"].Args, "TOOLCHAIN", "the runtime stage stays on the target's base")
	require.Equal(t, qemu.Target["jetpack6_2"], bf.Target["jetpack6_2"])

	p.Releases[0].CrossBuildBase = ""
	_, _, err = newBakeFile(p, in)
	require.ErrorContains(t, err, "release jetpack5.1: the cross path needs a cross_build_base")
}

func TestColdStable(t *testing.T) {
	d := func(v string) map[string]string {
		return map[string]string{"jetpack6.2": "sha256:" + v, "jetpack7.2": "sha256:7"}
	}
	var same, changed, failed timings
	for _, v := range []string{"a", "a", "a"} {
		same.addCold(result{wall: time.Second, digests: d(v)})
	}
	for _, v := range []string{"a", "a", "b"} {
		changed.addCold(result{wall: time.Second, digests: d(v)})
	}
	failed.addCold(result{wall: time.Second, digests: d("a")})
	failed.failCold("round 2, cold: exit status 1")
	n, diff := same.coldStable()
	require.Equal(t, 3, n)
	require.Empty(t, diff)
	_, diff = changed.coldStable()
	require.Equal(t, "release jetpack6.2: sha256:a in the first cold build, sha256:b in round 3's", diff)
	require.Equal(t, "no", changed.coldStableText())
	require.Equal(t, "- (1 cold build)", failed.coldStableText(), "a failed build gave no digests")
	errs := unstableDigests("shipped matrix, cross path", &changed)
	require.Len(t, errs, 1)
	require.EqualError(t, errs[0], "shipped matrix, cross path: jetbake's cold builds gave different image digests: "+diff)
}

// pathTimings is one tool's cold builds of a round each, with router
// builds of router each.
func pathTimings(router time.Duration, colds ...time.Duration) *timings {
	t := &timings{}
	for _, c := range colds {
		t.addCold(result{wall: c, timings: phasesWithRouter(router)})
		t.warm = append(t.warm, []time.Duration{time.Second})
	}
	return t
}

func TestPathsReport(t *testing.T) {
	s := time.Second
	results := map[string]map[string]*timings{
		pathQEMU:  {toolJetbake: pathTimings(40*s, 50*s, 40*s), toolBake: pathTimings(38*s, 45*s, 45*s)},
		pathCross: {toolJetbake: pathTimings(4*s, 10*s, 12*s), toolBake: pathTimings(5*s, 18*s, 0)},
	}
	results[pathCross][toolBake].cold[1] = 0 // round 2's cold build of bake failed
	var out strings.Builder
	names := []string{toolJetbake, toolBake}
	sum := printPaths(&out, size{name: shippedSize}, names, results)
	text := out.String()
	t.Log(text)
	require.Contains(t, text, "==> shipped matrix: QEMU path against cross path")
	require.Regexp(t, `router builds, QEMU\s+40.00 \(40.00-40.00\)\s+38.00 \(38.00-38.00\)`, text)
	require.Regexp(t, `router builds cross/QEMU\s+0.10x\s+0.13x`, text)
	require.Regexp(t, `cold, cross\s+11.00 \(10.00-12.00\)\s+18.00 \(18.00-18.00\)`, text, "bake's failed round is no 0 s build")
	require.Regexp(t, `cold cross/QEMU by round\s+0.20x 0.30x\s+0.40x`, text)
	require.Regexp(t, `cold cross/QEMU \(median\)\s+0.25x\s+0.40x`, text)

	out.Reset()
	empty := map[string]map[string]*timings{pathQEMU: {toolJetbake: pathTimings(40*s, 50*s)}, pathCross: {toolJetbake: {}}}
	printCrossGoal(&out, []pathSummary{sum, printPaths(&strings.Builder{}, size{name: "20", releases: 20}, []string{toolJetbake}, empty)})
	require.Contains(t, out.String(), "cold on the cross path <= 0.3x cold on the QEMU path")
	require.Contains(t, out.String(), "shipped matrix:")
	require.Contains(t, out.String(), "jetbake met (0.25x); bake (default) NOT met (0.40x)")
	require.Contains(t, out.String(), "jetbake not measured (no round where both tools built)")

	out.Reset()
	printPathTable(&out, []pathSummary{sum})
	require.Contains(t, out.String(), "| matrix         | tool           | router builds: QEMU | router builds: cross | cold: QEMU | cold: cross | cold cross/QEMU |")
	require.Regexp(t, `\| shipped matrix\s+\| jetbake\s+\| 40.00\s+\| 4.00\s+\| 45.00\s+\| 11.00\s+\| 0.25x \|`, out.String())
	require.Regexp(t, `\| shipped matrix\s+\| bake \(default\)\s+\| 38.00\s+\| 5.00\s+\| 45.00\s+\| 18.00\s+\| 0.40x \|`, out.String())

	out.Reset()
	printCrossGoal(&out, nil)
	printPathTable(&out, nil)
	require.Empty(t, out.String(), "one path only: no comparison of paths")
}

// A cold build starts with jetbake's verdict store cleared, before the
// prune: a failure to clear it stops the bench before it times anything.
func TestColdStartClearsVerdicts(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	require.Equal(t, imagebuild.DefaultVerdictDir(), verdictsDir(home), "where jetbake keeps them with the bench's XDG_CACHE_HOME")
	verdict := filepath.Join(verdictsDir(home), "sha256-ab.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(verdict), 0o755))
	require.NoError(t, os.WriteFile(verdict, []byte("{}"), 0o644))
	keep := filepath.Join(home, "jetbake", "bases", "x.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(keep), 0o755))
	require.NoError(t, os.WriteFile(keep, []byte("{}"), 0o644))
	require.NoError(t, clearVerdicts(home))
	require.NoDirExists(t, verdictsDir(home))
	require.FileExists(t, keep, "only the verdicts go")
	require.NoError(t, clearVerdicts(home), "nothing to clear is no error")
	require.Error(t, clearVerdicts(""))

	err := coldStart(t.Context(), nil, &contender{name: toolJetbake, clearCache: func() error { return errors.New("read-only") }})
	require.EqualError(t, err, "jetbake: read-only")
}

// The cross path's matrices are valid matrices (the stand-in cross build
// bases as `jetbake validate` wants them), every release has a cross
// build base, and each synthetic release its own.
func TestCrossMatrix(t *testing.T) {
	root, err := e2e.FindRepoRoot()
	require.NoError(t, err)
	for _, sz := range []size{{name: shippedSize}, {name: "5", releases: 5}} {
		path := filepath.Join(t.TempDir(), "matrix.json")
		require.NoError(t, writeMatrix(root, testRegistry, path, sz, pathCross))
		p, err := e2e.LoadPlan(path, e2e.AllowStandin(root))
		require.NoError(t, err, "%s: a cross matrix must be a valid matrix", sz)
		bases := map[string]bool{}
		for _, rel := range p.Releases {
			require.NotEmpty(t, rel.CrossBuildBase, "%s: release %s", sz, rel.Name)
			require.True(t, strings.HasPrefix(rel.CrossBuildBase, testRegistry+"/"), "pushed to the tool's registry")
			require.NotEmpty(t, rel.CUDATargetDir)
			if sz.releases > 0 {
				require.False(t, bases[rel.CrossBuildBase], "each synthetic release has its own cross build base")
			}
			bases[rel.CrossBuildBase] = true
		}
		in := testInputs()
		in.Cross = true
		bf, _, err := newBakeFile(p, in)
		require.NoError(t, err)
		for _, rel := range p.Releases {
			rt := bf.Target[routerTargetName(rel.Name, rel.Targets[0])]
			require.Equal(t, rel.CrossBuildBase, rt.Args["CROSS_BUILD_BASE"])
			require.Equal(t, rel.CUDATargetDir, rt.Args["CUDA_TARGET_DIR"])
		}

		qemu := filepath.Join(t.TempDir(), "matrix.json")
		require.NoError(t, writeMatrix(root, testRegistry, qemu, sz, pathQEMU))
		p, err = e2e.LoadPlan(qemu, e2e.AllowStandin(root))
		require.NoError(t, err)
		for _, rel := range p.Releases {
			require.Empty(t, rel.CrossBuildBase, "the QEMU path's matrix is the shipped one")
		}
	}
}
