package fleet_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/jetbake/jetbake/builder/doctor"
	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/kubebed"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

// shippedReleases are the shipped matrix's releases as a build leaves them:
// their annotations, with an audit that covers every target.
func shippedReleases(t *testing.T) []fleet.Release {
	t.Helper()
	m, err := matrix.Load(filepath.Join("..", "..", "matrix.json"))
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	var out []fleet.Release
	for _, r := range p.Releases {
		out = append(out, releaseOf(t, r))
	}
	return out
}

// labelsOf runs doctor on the host view under root and returns its node
// labels.
func labelsOf(t *testing.T, root string) map[string]string {
	t.Helper()
	r, err := doctor.Run(context.Background(), doctor.WithSysroot(root))
	require.NoError(t, err)
	return r.NodeLabels()
}

// withRuntime adds NVIDIA's container runtime to a host view, as a k3s
// node with the toolkit installed has it.
func withRuntime(t *testing.T, root string) {
	t.Helper()
	require.NoError(t, kubebed.WriteK3sNVIDIA(root))
}

// matching lists the releases whose affinity matches the labels.
func matching(t *testing.T, affs map[string]*corev1.NodeAffinity, labels map[string]string) []string {
	t.Helper()
	var out []string
	for name, a := range affs {
		ok, err := fleet.Matches(a, labels)
		require.NoError(t, err)
		if ok {
			out = append(out, name)
		}
	}
	return out
}

// pickChoice is the release pick chooses for a host with these labels, or
// "" when none fits.
func pickChoice(releases []fleet.Release, labels map[string]string) string {
	h, ok := doctor.HostFromLabels(labels)
	if !ok || labels[doctor.LabelNVIDIARuntime] != "true" {
		return ""
	}
	metas := make([]imagepick.Meta, len(releases))
	for i, r := range releases {
		metas[i] = r.Meta
	}
	order := imagepick.Order(h, metas, hostfit.Compatible)
	if len(order) == 0 {
		return ""
	}
	return releases[order[0]].Name
}

func TestNodeLabelsOfHostViews(t *testing.T) {
	want := map[string]map[string]string{
		"orin-jp6": {doctor.LabelSM: "8.7", doctor.LabelL4T: "36.4.3", doctor.LabelL4TMajor: "36", doctor.LabelJetPack: "6.2",
			doctor.LabelDriverCUDA: "12.6", doctor.LabelSoC: "tegra234", doctor.LabelNVIDIARuntime: "true", doctor.LabelJetson: "true"},
		"thor-jp7.1": {doctor.LabelSM: "11.0", doctor.LabelL4T: "38.4.0", doctor.LabelL4TMajor: "38", doctor.LabelJetPack: "7.1",
			doctor.LabelDriverCUDA: "13.0", doctor.LabelDriverCUDAMajor: "13", doctor.LabelDriverCUDAMinor: "0"},
	}
	for _, h := range e2e.HostViews() {
		root := t.TempDir()
		require.NoError(t, h.WriteFacts(root))
		withRuntime(t, root)
		labels := labelsOf(t, root)
		for k, v := range want[h.Name] {
			require.Equal(t, v, labels[k], "%s: %s", h.Name, k)
		}
		var b strings.Builder
		require.NoError(t, doctor.WriteFeatureFile(&b, labels))
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
			require.True(t, strings.HasPrefix(line, doctor.LabelPrefix), line)
		}
	}
}

// TestAffinityIsPicksChoice: on every host view, exactly the release pick
// chooses matches (none where nothing fits, or where NVIDIA's runtime is
// missing), and a node that is not a Jetson matches none.
func TestAffinityIsPicksChoice(t *testing.T) {
	releases := shippedReleases(t)
	affs, err := fleet.Affinities(releases)
	require.NoError(t, err)
	seen := 0
	lines := map[string]string{}
	for _, l := range e2e.HostLines() {
		lines[l.Host] = l.Release
	}
	for _, h := range e2e.HostViews() {
		for _, runtime := range []bool{true, false} {
			root := t.TempDir()
			require.NoError(t, h.WriteFacts(root))
			if runtime {
				withRuntime(t, root)
			}
			labels := labelsOf(t, root)
			want := pickChoice(releases, labels)
			got := matching(t, affs, labels)
			if want == "" {
				require.Empty(t, got, "%s (runtime %v)", h.Name, runtime)
				continue
			}
			seen++
			require.Equal(t, []string{want}, got, "%s", h.Name)
			if line, ok := lines[h.Name]; ok {
				require.Equal(t, line, want, "%s: the test bed's own image for it", h.Name)
			}
			t.Logf("%-16s -> %s", h.Name, want)
		}
	}
	require.GreaterOrEqual(t, seen, 6)
	require.Empty(t, matching(t, affs, map[string]string{"kubernetes.io/arch": "amd64"}))
}

// TestAffinityOverTheTable: every JetPack release of the table of Jetson
// facts, on every SoC it supports, at its own L4T and at later patch and
// minor releases, gets exactly pick's choice, also with releases dropped
// from the matrix.
func TestAffinityOverTheTable(t *testing.T) {
	all := shippedReleases(t)
	tab := computecap.DefaultTable()
	for drop := -1; drop < len(all); drop++ {
		releases := all
		if drop >= 0 {
			releases = append(append([]fleet.Release{}, all[:drop]...), all[drop+1:]...)
		}
		affs, err := fleet.Affinities(releases)
		require.NoError(t, err)
		for _, soc := range tab.SoCs {
			for _, jp := range tab.JetPacks {
				if !soc.Supports(jp.JetPack) {
					continue
				}
				base, err := computecap.ParseL4TVersion(jp.L4T)
				require.NoError(t, err)
				for _, l4t := range []computecap.L4TVersion{base, {Major: base.Major, Minor: base.Minor, Patch: base.Patch + 4}, {Major: base.Major, Minor: base.Minor + 1}} {
					h := hostfit.Host{SoC: soc.Name, Family: soc.Family, GPU: soc.Capability, L4T: l4t, L4TVersion: l4t.String(), JetPack: tab.JetPackName(l4t)}
					h.DriverCUDA, _ = tab.DriverCUDAForL4T(l4t)
					labels := (&doctor.Report{Host: h, NVIDIARuntime: "/usr/bin/nvidia-container-runtime", NVIDIARuntimeCheck: doctor.CheckK3sRuntime,
						Checks: []doctor.Check{{Name: doctor.CheckK3sRuntime, Status: doctor.StatusOK}}}).NodeLabels()
					want := pickChoice(releases, labels)
					got := matching(t, affs, labels)
					if want == "" {
						require.Empty(t, got, "%s L4T %s", soc.Name, l4t)
					} else {
						require.Equal(t, []string{want}, got, "%s L4T %s (JetPack %q), drop %d", soc.Name, l4t, h.JetPack, drop)
					}
				}
			}
		}
	}
}
