package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jetbake/jetbake/builder/doctor"
	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// declaredReleases are the releases of the test bed's matrix with the
// declared JetPack 7.3 (e2e.WithDeclaredJetPack) as a build leaves them,
// and the facts file it declares them in.
func declaredReleases(t *testing.T) ([]fleet.Release, string) {
	t.Helper()
	root, err := e2e.FindRepoRoot()
	require.NoError(t, err)
	dir := t.TempDir()
	declared, err := e2e.WithDeclaredJetPack(dir)
	require.NoError(t, err)
	path := filepath.Join(dir, "matrix.json")
	require.NoError(t, e2e.WriteDemoMatrix(root, "registry.example", path, declared))
	p, err := e2e.LoadPlan(path, e2e.AllowStandin(root))
	require.NoError(t, err)
	var out []fleet.Release
	for _, r := range p.Releases {
		out = append(out, releaseOf(t, r))
	}
	return out, filepath.Join(dir, e2e.DeclaredFactsFile)
}

// releaseOf is a planned release as its image's annotations say it, with
// an audit that covers every target.
func releaseOf(t *testing.T, r plan.Release) fleet.Release {
	t.Helper()
	kv := r.Annotations
	var audit []string
	for _, tg := range r.Targets {
		audit = append(audit, tg.SM+"=runs")
	}
	kv[matrix.KeyAudit] = strings.Join(audit, ",")
	meta, err := imagepick.ParseMeta(kv)
	require.NoError(t, err, r.Name)
	return fleet.Release{Name: r.Name, Image: "registry.example/router@sha256:" + strings.Repeat("a", 64), Meta: meta}
}

// On the declared JetPack 7.3's host views, the node labels of `jetbake
// doctor --facts` (the matrix's facts file) say JetPack 7.3 and a driver
// for CUDA 13.3, and the only release whose affinity matches is the 7.3
// one, pick's choice. Without the declared rows doctor knows no L4T 39.3
// and labels the host with R39's newest row in its own table (JetPack 7.2,
// CUDA 13.2): the 7.2 release is placed there, never the 7.3 one.
func TestAffinityOnDeclaredHostViews(t *testing.T) {
	releases, factsFile := declaredReleases(t)
	affs, err := fleet.Affinities(releases)
	require.NoError(t, err)
	table, _, err := matrix.LoadFacts(factsFile)
	require.NoError(t, err)
	for _, h := range e2e.DeclaredHostViews() {
		root := t.TempDir()
		require.NoError(t, h.WriteFacts(root))
		withRuntime(t, root)
		r, err := doctor.Run(context.Background(), doctor.WithSysroot(root), doctor.WithHostFacts(hostfit.SysrootReader{Table: table}))
		require.NoError(t, err)
		labels := r.NodeLabels()
		require.Equal(t, "7.3", labels[doctor.LabelJetPack], h.Name)
		require.Equal(t, "13.3", labels[doctor.LabelDriverCUDA], h.Name)
		require.Equal(t, e2e.DeclaredRelease, pickChoice(releases, labels), h.Name)
		require.Equal(t, []string{e2e.DeclaredRelease}, matching(t, affs, labels), h.Name)

		bare := labelsOf(t, root)
		require.Equal(t, "7.2", bare[doctor.LabelJetPack], "%s: jetbake's own table has no row for L4T 39.3.0", h.Name)
		require.Equal(t, "13.2", bare[doctor.LabelDriverCUDA], h.Name)
		require.Equal(t, []string{"jetpack7.2"}, matching(t, affs, bare), h.Name)
	}
	// On a 7.2 host the 7.2 release is placed, not the declared 7.3.
	for _, h := range e2e.HostViews() {
		if !strings.HasSuffix(h.Name, "-jp7.2") {
			continue
		}
		root := t.TempDir()
		require.NoError(t, h.WriteFacts(root))
		withRuntime(t, root)
		labels := labelsOf(t, root)
		require.Equal(t, []string{"jetpack7.2"}, matching(t, affs, labels), h.Name)
	}
	_, err = os.Stat(factsFile)
	require.NoError(t, err)
}

// A declared release on an L4T line jetbake's table lacks (a fictional
// JetPack 8.0 on R40, CUDA 14.1, Thor): the affinity follows the declared
// row's host rule (the driver's CUDA), which only the row the image
// carries (io.jetbake.facts.jetpack) says.
func TestAffinityOfDeclaredLine(t *testing.T) {
	row := `{"jetpack":"8.0","l4t":"40.1.0","cuda":"14.1","ubuntu":"24.04","flavour":"sbsa","rule":"driver-cuda","sms":["11.0"],` +
		`"driver_dirs":[{"dir":"/opt/nvidia/l4t-gpu-libs/openrm","family":"Thor","driver":{"name":"OpenRM","nodes":[["/dev/nvidiactl"],["/dev/nvidia0"]]}}]}`
	meta, err := imagepick.ParseMeta(map[string]string{matrix.KeyRelease: "jetpack8.0", matrix.KeyJetPack: "8.0", matrix.KeyL4T: "40.1.0",
		matrix.KeyCUDA: "14.1", matrix.KeySMTargets: "11.0", matrix.KeyTier: "candidate", matrix.KeyFacts: matrix.FactsDeclared,
		matrix.KeyFactsJetPack: row})
	require.NoError(t, err)
	affs, err := fleet.Affinities([]fleet.Release{{Name: "jetpack8.0", Image: "registry.example/router@sha256:" + strings.Repeat("a", 64), Meta: meta}})
	require.NoError(t, err)
	thor := func(driver, minor string) map[string]string {
		return map[string]string{doctor.LabelJetson: "true", doctor.LabelNVIDIARuntime: "true", doctor.LabelSM: "11.0", doctor.LabelSoC: "tegra264",
			doctor.LabelFamily: "Thor", doctor.LabelL4T: "40.1.0", doctor.LabelL4TMajor: "40", doctor.LabelL4TMinor: "1", doctor.LabelL4TPatch: "0",
			doctor.LabelDriverCUDA: driver + "." + minor, doctor.LabelDriverCUDAMajor: driver, doctor.LabelDriverCUDAMinor: minor}
	}
	require.Equal(t, []string{"jetpack8.0"}, matching(t, affs, thor("14", "1")))
	require.Empty(t, matching(t, affs, thor("14", "0")), "a driver older than the release's CUDA 14.1")
}

// The labeller carries the declared rows the releases' images hold: a
// ConfigMap with them as a facts file, mounted where its doctor reads it
// with --facts, so that a node on the declared JetPack 7.3 is labelled
// 7.3 (and gets the 7.3 release) rather than R39's newest built-in row.
// Releases that declare nothing give the labeller no ConfigMap.
func TestLabellerCarriesDeclaredRows(t *testing.T) {
	releases, _ := declaredReleases(t)
	rows := fleet.DeclaredJetPacks(releases)
	require.Len(t, rows, 1)
	require.Equal(t, "7.3", rows[0].JetPack)
	objs := fleet.Labeller("registry.example/jetbake@sha256:"+strings.Repeat("c", 64), "jetsons", rows...)
	cm, ok := objs["labeller-facts-configmap.yaml"].(*corev1.ConfigMap)
	require.True(t, ok, "no ConfigMap of declared rows")
	require.Equal(t, fleet.LabellerName+"-facts", cm.Name)
	require.Equal(t, "jetsons", cm.Namespace)
	pod := objs["labeller-daemonset.yaml"].(*appsv1.DaemonSet).Spec.Template.Spec
	require.Equal(t, []string{"--facts", fleet.LabellerFactsFile}, pod.Containers[0].Args[len(pod.Containers[0].Args)-2:])
	var mounted bool
	for _, m := range pod.Containers[0].VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
				mounted = m.MountPath+"/facts.json" == fleet.LabellerFactsFile && m.ReadOnly
			}
		}
	}
	require.True(t, mounted, "the ConfigMap is not mounted read-only at %s", fleet.LabellerFactsFile)

	// What the pod's doctor reads: the ConfigMap's file, checked as
	// validate checks a matrix's facts, labels a 7.3 host view 7.3.
	factsFile := filepath.Join(t.TempDir(), "facts.json")
	require.NoError(t, os.WriteFile(factsFile, []byte(cm.Data["facts.json"]), 0o644))
	table, _, err := matrix.LoadFacts(factsFile)
	require.NoError(t, err)
	h := e2e.DeclaredHostViews()[0]
	root := t.TempDir()
	require.NoError(t, h.WriteFacts(root))
	withRuntime(t, root)
	r, err := doctor.Run(context.Background(), doctor.WithSysroot(root), doctor.WithHostFacts(hostfit.SysrootReader{Table: table}))
	require.NoError(t, err)
	require.Equal(t, "7.3", r.NodeLabels()[doctor.LabelJetPack], h.Name)

	plain := fleet.Labeller("registry.example/jetbake@sha256:"+strings.Repeat("c", 64), "jetsons", fleet.DeclaredJetPacks(releases[:1])...)
	require.NotContains(t, plain, "labeller-facts-configmap.yaml")
	require.Equal(t, fleet.LabellerArgs(), plain["labeller-daemonset.yaml"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Args)
}
