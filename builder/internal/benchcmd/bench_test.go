package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/imageconfig"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

const testRegistry = "127.0.0.1:5000"

// demoPlan plans the demo matrix against testRegistry, as the bench does.
func demoPlan(t *testing.T) *plan.Plan {
	t.Helper()
	root, err := e2e.FindRepoRoot()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "matrix.json")
	require.NoError(t, e2e.WriteDemoMatrix(root, testRegistry, path))
	p, err := e2e.LoadPlan(path, e2e.AllowStandin(root))
	require.NoError(t, err)
	return p
}

func testInputs() bakeInputs {
	return bakeInputs{Mirrors: refs.Mirrors{"nvcr.io": testRegistry}, EntrypointDir: "/ep", Revision: benchRevision, Epoch: benchEpoch}
}

func TestBakeFileTargets(t *testing.T) {
	p := demoPlan(t)
	bf, files, err := newBakeFile(p, testInputs())
	require.NoError(t, err)
	routers := 0
	for _, rel := range p.Releases {
		routers += len(rel.Targets)
	}
	require.Len(t, bf.Target, 2*len(p.Releases)+routers, "one runtime target and one runtime stage per release, one router target per SM")
	require.Len(t, bf.Group["default"].Targets, len(p.Releases), "only runtime targets are built by default")
	require.Len(t, files, len(p.Releases)+1, "a folder per release, and the jetbake named context")
	require.Contains(t, files[jetbakeContextDir], "jetson-compute-cap.sh")

	tests := []struct {
		release, target, computeCap, arch, buildBase string
	}{
		{"jetpack5.1", "jetpack5_1-sm72", "72", "sm_72", testRegistry + "/nvidia/l4t-jetpack:r35.4.1"},
		{"jetpack6.2", "jetpack6_2-sm87", "87", "sm_87", testRegistry + "/nvidia/l4t-jetpack:r36.4.0"},
		{"jetpack7.2", "jetpack7_2-sm110", "110", "sm_110", testRegistry + "/nvidia/cuda:13.2.0-devel-ubuntu24.04"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			rt, ok := bf.Target[tt.target]
			require.True(t, ok, "router target %s", tt.target)
			require.Equal(t, "router", rt.Target)
			require.Equal(t, p.Router.Dockerfile, rt.Dockerfile, "the shipped Dockerfile, outside the context")
			require.Equal(t, "12.6", bf.Target["jetpack6_2-sm87"].Args["CUDA_RELEASE"])
			require.Equal(t, []string{"linux/arm64"}, rt.Platforms)
			require.Equal(t, tt.computeCap, rt.Args["CUDA_COMPUTE_CAP"])
			require.Equal(t, tt.arch, rt.Args["CUDA_ARCH"])
			require.Equal(t, tt.buildBase, rt.Args["BUILD_BASE"])
			require.Empty(t, rt.Output, "router targets are only built as links")

			stage := bf.Target[bakeName(tt.release)+"-runtime"]
			require.Equal(t, "runtime-base", stage.Target)
			require.Equal(t, "static-linking", stage.Args["CUDA_LINKING"])
			runtime := bf.Target[bakeName(tt.release)]
			require.Equal(t, "target:"+bakeName(tt.release)+"-runtime", runtime.Contexts["jetbake-runtime"])
			require.Equal(t, "target:"+tt.target, runtime.Contexts["router-"+tt.computeCap])
			require.Equal(t, "/ep", runtime.Contexts[entrypointContext])
			require.Contains(t, runtime.Output[0], "push=true")
			require.NotContains(t, runtime.Output[0], "rewrite-timestamp", "bake's default output")
			require.Contains(t, runtime.Attest, "type=provenance,disabled=true")
			rel, _ := p.Release(tt.release)
			require.Equal(t, rel.Tags, runtime.Tags)
		})
	}
}

func TestRuntimeDockerfile(t *testing.T) {
	p := demoPlan(t)
	rel, ok := p.Release("jetpack7.2")
	require.True(t, ok)
	df := string(runtimeDockerfile(p, *rel))
	for _, want := range []string{
		"FROM jetbake-runtime AS assembly\n",
		"COPY --from=router-87 /usr/local/bin/text-embeddings-router /usr/local/bin/router-87\n",
		"COPY --from=router-110 /usr/local/bin/text-embeddings-router /usr/local/bin/router-110\n",
		"COPY --from=jetbake-entrypoint jetbake-entrypoint jetbake-cudaprobe jetbake-probe /usr/local/bin/\n",
		"COPY image.json /etc/jetbake/image.json\n",
		`ENTRYPOINT ["/usr/local/bin/jetbake-entrypoint"]`,
	} {
		require.Contains(t, df, want)
	}
	require.NotContains(t, df, "# syntax", "a syntax line would pull a frontend image")
}

func TestImageJSON(t *testing.T) {
	p := demoPlan(t)
	rel, _ := p.Release("jetpack6.2")
	data, err := imageconfig.Description(p, *rel, benchRevision)
	require.NoError(t, err)
	img, err := imagespec.Parse(data)
	require.NoError(t, err)
	require.Equal(t, "jetpack6.2", img.Release)
	require.Equal(t, []imagespec.Target{{SM: "8.7", Path: "/usr/local/bin/router-87"}}, img.Targets)
	require.Len(t, img.Family, len(p.Releases))
}

func TestWriteBakeFile(t *testing.T) {
	p := demoPlan(t)
	dir := t.TempDir()
	path, _, err := writeBakeFile(dir, p, testInputs())
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var bf bakeFile
	require.NoError(t, json.Unmarshal(data, &bf))
	for _, name := range bf.Group["default"].Targets {
		require.FileExists(t, filepath.Join(dir, bf.Target[name].Context, "Dockerfile"))
		require.FileExists(t, filepath.Join(dir, bf.Target[name].Context, "image.json"))
	}
}

func TestBakeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"jetpack6.2", "jetpack6_2"},
		{"jetpack6.2.1", "jetpack6_2_1"},
		{"broken", "broken"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, bakeName(tt.in))
		require.False(t, strings.ContainsAny(bakeName(tt.in), ".+"))
	}
}

func TestMedian(t *testing.T) {
	s := time.Second
	tests := []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3 * s}, 3 * s},
		{[]time.Duration{3 * s, 1 * s, 2 * s}, 2 * s},
		{[]time.Duration{4 * s, 1 * s, 2 * s, 3 * s}, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, median(tt.in))
	}
}

func TestDiffFiles(t *testing.T) {
	a := map[string][]byte{"usr/local/bin/router-87": []byte("x")}
	tests := []struct {
		name      string
		want, got map[string][]byte
		diff      string
	}{
		{"same", a, map[string][]byte{"usr/local/bin/router-87": []byte("x")}, ""},
		{"missing in bake", a, map[string][]byte{}, "jetbake's image has /usr/local/bin/router-87, bake's has not"},
		{"extra in bake", map[string][]byte{}, a, "bake's image has /usr/local/bin/router-87, jetbake's has not"},
		{"content", a, map[string][]byte{"usr/local/bin/router-87": []byte("y")}, "/usr/local/bin/router-87 differs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := diffFiles(tt.want, tt.got)
			if tt.diff == "" {
				require.Empty(t, d)
				return
			}
			require.Contains(t, d, tt.diff)
		})
	}
}

// phasesWithRouter is a cold build's phases whose router builds took router.
func phasesWithRouter(router time.Duration) *progress.Timings {
	return &progress.Timings{Phases: []progress.PhaseTiming{{Name: progress.PhaseRouter, WallSeconds: router.Seconds(), Steps: 2}}}
}

func TestPairedRatios(t *testing.T) {
	s := time.Second
	jb := &timings{cold: []time.Duration{4 * s, 2 * s}, coldPhases: []*progress.Timings{phasesWithRouter(3 * s), phasesWithRouter(s)},
		warm: [][]time.Duration{{1 * s, 3 * s, 2 * s}, {1 * s}}}
	bk := &timings{cold: []time.Duration{8 * s, 2 * s}, coldPhases: []*progress.Timings{phasesWithRouter(6 * s), nil},
		warm: [][]time.Duration{{4 * s}, {2 * s, 2 * s}}}
	r := pairedRatios(jb, bk)
	require.Equal(t, []float64{0.5, 1}, r.cold)
	require.Equal(t, []float64{0.5}, r.own, "1 s of 4 outside the router builds against 2 s of 8; round 2 has no phases of bake")
	require.Equal(t, []float64{0.5, 0.5}, r.warm)
	require.Equal(t, 0.75, median(r.cold))
	require.Equal(t, 1500*time.Millisecond, median(jb.allWarm()), "warm builds of every round pooled")
	require.Equal(t, peerRatios{cold: 0.75, own: 0.5, warm: 0.5}, r.medians())
}

func TestBakeFileRewriteTimestamp(t *testing.T) {
	p := demoPlan(t)
	in := testInputs()
	in.RewriteTimestamp = true
	bf, _, err := newBakeFile(p, in)
	require.NoError(t, err)
	for _, name := range bf.Group["default"].Targets {
		require.Contains(t, bf.Target[name].Output[0], "rewrite-timestamp=true")
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("shipped, 5,50")
	require.NoError(t, err)
	require.Equal(t, []size{{name: "shipped"}, {name: "5", releases: 5}, {name: "50", releases: 50}}, got)
	for _, bad := range []string{"", "0", "five", "shipped,-1", "501"} {
		_, err := parseSizes(bad)
		require.Error(t, err, bad)
	}
}

func TestSyntheticMatrix(t *testing.T) {
	root, err := e2e.FindRepoRoot()
	require.NoError(t, err)
	for _, n := range []int{1, 5, 20} {
		path := filepath.Join(t.TempDir(), "matrix.json")
		require.NoError(t, writeMatrix(root, testRegistry, path, size{name: fmt.Sprint(n), releases: n}, pathQEMU))
		p, err := e2e.LoadPlan(path, e2e.AllowStandin(root))
		require.NoError(t, err, "a synthetic matrix must be a valid matrix")
		require.Len(t, p.Releases, n)
		bases := map[string]bool{}
		for _, rel := range p.Releases {
			require.GreaterOrEqual(t, len(rel.Targets), 2, "2-3 SM targets per release")
			require.LessOrEqual(t, len(rel.Targets), 3)
			require.Len(t, rel.Tags, 1)
			require.False(t, bases[rel.BuildBase], "each release has its own build base, so its own router builds")
			bases[rel.BuildBase] = true
		}
		// The bake file describes the same work.
		bf, _, err := newBakeFile(p, testInputs())
		require.NoError(t, err)
		require.Len(t, bf.Group["default"].Targets, n)
	}
}

func TestTimingsTable(t *testing.T) {
	s := time.Second
	a := &timings{releases: 5}
	b := &timings{}
	c := &timings{}
	for i := range 3 {
		a.addCold(result{wall: time.Duration(i+1) * s, maxRSS: 40 << 20, digests: map[string]string{"r": "sha256:a"},
			timings: phasesWithRouter(time.Duration(i+1) * s / 2)})
		a.warm = append(a.warm, []time.Duration{s / 4})
		b.addCold(result{wall: 2 * s, digests: map[string]string{"r": fmt.Sprint("sha256:", i)}, timings: phasesWithRouter(s)})
		b.warm = append(b.warm, []time.Duration{s})
		c.addCold(result{wall: 4 * s, digests: map[string]string{"r": "sha256:c"}, timings: phasesWithRouter(2 * s)})
		c.warm = append(c.warm, []time.Duration{2 * s})
	}
	var out strings.Builder
	sum := printTable(&out, size{name: "shipped"}, pathQEMU, tools, map[string]*timings{toolJetbake: a, toolBake: b, toolBakeRTS: c})
	require.Equal(t, peerRatios{cold: 1, own: 1, warm: 0.25}, sum.ratios[toolBake], "median of 0.5x, 1x, 1.5x; half of each build is its router builds")
	require.Equal(t, int64(40<<20), sum.maxRSS)
	text := out.String()
	t.Log(text)
	require.Contains(t, text, "bake (rewrite-timestamp)")
	require.Contains(t, text, "2.00 (1.00-3.00)")
	require.Regexp(t, `cold s without router builds\s+1.00 \(0.50-1.50\)\s+1.00 \(1.00-1.00\)\s+2.00 \(2.00-2.00\)`, text)
	require.Contains(t, text, "40 MiB")
	require.Regexp(t, `router builds\s+1.00\s+1.00\s+2.00`, text, "the phase table has a column per tool")
	require.Regexp(t, `same digests every build\s+yes\s+no\s+yes`, text)
	require.Regexp(t, `same digests cold to cold\s+yes \(3 cold builds\)\s+no\s+yes \(3 cold builds\)`, text)
	require.Contains(t, text, "==> shipped matrix, QEMU path: medians")
	require.Contains(t, text, "jetbake/bake-rts round by round: cold 0.25x 0.50x 0.75x (median 0.50x), cold without router builds 0.25x 0.50x 0.75x (median 0.50x)")
	require.Empty(t, brokenComparison(label(size{name: "shipped"}, pathQEMU), tools, map[string]*timings{toolJetbake: a, toolBake: b, toolBakeRTS: c}))
	require.Empty(t, unstableDigests("shipped matrix, QEMU path", a))
	require.Len(t, unstableDigests("shipped matrix, QEMU path", b), 1, "bake's default output: the digests changed")

	out.Reset()
	printGoals(&out, []sizeSummary{sum, {size: size{name: "50", releases: 50}, path: pathCross, releases: 50, maxRSS: 300 << 20,
		ratios: map[string]peerRatios{toolBake: {cold: 0.8, own: 0.4, warm: 0.5}}}})
	require.Contains(t, out.String(), "cold <= 1.0x: met (1.00x); cold without router builds <= 0.5x: NOT met (1.00x); warm <= 0.3x: met (0.25x)")
	require.Contains(t, out.String(), "warm <= 0.3x: NOT met (0.50x); memory < 200 MiB: NOT met (300 MiB)")
	require.Contains(t, out.String(), "  shipped matrix, QEMU path: ")
	require.Contains(t, out.String(), "  synthetic matrix of 50 releases, cross path: ")

	out.Reset()
	printRatioTable(&out, []sizeSummary{sum}, tools[1:])
	require.Regexp(t, `\| shipped matrix, QEMU path\s+\| 1.00x\s+\| 1.00x\s+\| 0.25x\s+\| 0.50x\s+\| 0.50x\s+\| 0.12x\s+\|`, out.String())
}

// A peer's failed build is shown and its round left out of the ratios; when
// no round has both tools' builds, the goal is not measured, not met, and
// the comparison is broken.
func TestTimingsTableFailedPeer(t *testing.T) {
	s := time.Second
	a := &timings{releases: 50}
	b := &timings{}
	for i := range 2 {
		a.addCold(result{wall: 20 * s, maxRSS: 60 << 20, timings: phasesWithRouter(10 * s)})
		a.warm = append(a.warm, []time.Duration{2 * s})
		if i == 0 {
			b.addCold(result{wall: 40 * s, timings: phasesWithRouter(10 * s)})
			b.warm = append(b.warm, nil)
			b.fail("round 1, warm #1: exit status 1")
			continue
		}
		b.failCold("round 2, cold: exit status 1")
	}
	var out strings.Builder
	names := []string{toolJetbake, toolBake}
	results := map[string]*timings{toolJetbake: a, toolBake: b}
	sum := printTable(&out, size{name: "50", releases: 50}, pathCross, names, results)
	text := out.String()
	require.Regexp(t, `failed builds\s+0\s+2`, text)
	require.Contains(t, text, "bake (default) failed: round 2, cold: exit status 1")
	require.Contains(t, text, "40.00 (40.00-40.00)", "the failed cold build is not a 0 s build")
	require.Equal(t, 0.5, sum.ratios[toolBake].cold, "only round 1 pairs")
	require.InDelta(t, 10.0/30, sum.ratios[toolBake].own, 1e-9)
	require.True(t, math.IsNaN(sum.ratios[toolBake].warm), "no round has warm builds of both")

	out.Reset()
	printGoals(&out, []sizeSummary{sum})
	require.Contains(t, out.String(), "cold <= 1.0x: met (0.50x); cold without router builds <= 0.5x: met (0.33x); warm <= 0.3x: not measured (no round where both tools built); memory < 200 MiB: met (60 MiB)")
	errs := brokenComparison(label(size{name: "50", releases: 50}, pathCross), names, results)
	require.Len(t, errs, 1)
	require.EqualError(t, errs[0], "synthetic matrix of 50 releases, cross path: no warm ratio of jetbake to bake (default): no round where both built warm: round 1, warm #1: exit status 1")
}

// A peer that fails every round, as bake did when its filesystem
// entitlements refused the Dockerfile, breaks the comparison: the bench
// names the tool and its reason and exits non-zero.
func TestBrokenComparison(t *testing.T) {
	s := time.Second
	jb := &timings{}
	jb.addCold(result{wall: 20 * s, timings: phasesWithRouter(10 * s), digests: map[string]string{"r": "sha256:a"}})
	jb.warm = append(jb.warm, []time.Duration{s})
	failed := &timings{}
	failed.failCold("round 1, cold: ERROR: additional privileges requested (buildx bake: exit status 1)\nmore output")
	noPhases := &timings{}
	noPhases.addCold(result{wall: 30 * s, timings: &progress.Timings{}, digests: map[string]string{"r": "sha256:b"}})
	noPhases.warm = append(noPhases.warm, []time.Duration{s})
	sz := size{name: shippedSize}
	errs := brokenComparison(label(sz, pathQEMU), tools, map[string]*timings{toolJetbake: jb, toolBake: failed, toolBakeRTS: noPhases})
	require.Len(t, errs, 2)
	require.EqualError(t, errs[0], "shipped matrix, QEMU path: bake (default) failed every round: round 1, cold: ERROR: additional privileges requested (buildx bake: exit status 1)")
	require.ErrorContains(t, errs[1], "shipped matrix, QEMU path: bake (rewrite-timestamp)'s phases could not be read from its rawjson progress")

	var out strings.Builder
	printTable(&out, sz, pathQEMU, tools, map[string]*timings{toolJetbake: jb, toolBake: failed, toolBakeRTS: noPhases})
	require.Contains(t, out.String(), "jetbake/bake: no ratio, no round where both built")
	require.Regexp(t, `cold s/release\s+20.000\s+-\s+30.000`, out.String())
	require.Regexp(t, `same digests every build\s+yes\s+-\s+yes`, out.String(), "a tool that built nothing has no digests to compare")
	require.Regexp(t, `same digests cold to cold\s+- \(1 cold build\)\s+- \(0 cold build\)\s+- \(1 cold build\)`, out.String(), "one cold build is no comparison")
	require.NotContains(t, out.String(), "tagging", "a phase no tool had is no row")

	out.Reset()
	printGoals(&out, []sizeSummary{{size: size{name: "1", releases: 1}, path: pathQEMU, releases: 1, ratios: map[string]peerRatios{}}})
	require.Contains(t, out.String(), "synthetic matrix of 1 release, QEMU path: ")
	require.Contains(t, out.String(), "no ratio to bake's default output (not among -tools, or no round where both built)")

	// jetbake alone compares nothing, by request: nothing is broken.
	require.Empty(t, brokenComparison(label(sz, pathQEMU), []string{toolJetbake}, map[string]*timings{toolJetbake: jb}))
}

func TestWatchPeakRSS(t *testing.T) {
	// The bench's own process stands in for a tool: its peak is at least its current size.
	var peak int64
	stop := watchPeakRSS(os.Getpid(), &peak)
	time.Sleep(20 * time.Millisecond)
	stop()
	require.Greater(t, peak, int64(1<<20))
	require.Zero(t, vmHWM("/proc/0/no-such-status"))
}

func TestRoundOrder(t *testing.T) {
	require.Equal(t, []int{0, 1, 2}, roundOrder(3, 0))
	require.Equal(t, []int{1, 2, 0}, roundOrder(3, 1))
	require.Equal(t, []int{2, 0, 1}, roundOrder(3, 2))
	require.Equal(t, []int{0, 2, 1}, roundOrder(3, 3))
	for _, n := range []int{2, 3} {
		// In the first n rounds, each tool goes first once.
		firsts := map[int]bool{}
		for r := range n {
			firsts[roundOrder(n, r)[0]] = true
		}
		require.Len(t, firsts, n)
		// Over 2n rounds, every tool follows every other tool.
		follows := map[[2]int]bool{}
		for r := range 2 * n {
			o := roundOrder(n, r)
			require.ElementsMatch(t, o, roundOrder(n, 0), "every tool once a round")
			for i := 1; i < len(o); i++ {
				follows[[2]int{o[i-1], o[i]}] = true
			}
		}
		require.Len(t, follows, n*(n-1))
	}
	require.Equal(t, []int{0}, roundOrder(1, 1))
}
