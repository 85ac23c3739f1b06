package fleet_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/matrix"
)

func TestManifestsOnePerReleasePinnedByDigest(t *testing.T) {
	releases := shippedReleases(t)
	for _, kind := range []string{fleet.KindDaemonSet, fleet.KindDeployment} {
		objs, err := fleet.Objects(releases, fleet.Options{App: "router", Kind: kind, Replicas: 2})
		require.NoError(t, err)
		files, err := fleet.Render(objs, "jetsons")
		require.NoError(t, err)
		require.Contains(t, string(files["kustomization.yaml"]), "namespace: jetsons")
		require.Contains(t, string(files["runtimeclass.yaml"]), "handler: nvidia")
		for _, r := range releases {
			data, ok := files[fleet.WorkloadName("router", r.Name)+".yaml"]
			require.True(t, ok, r.Name)
			require.Contains(t, string(files["kustomization.yaml"]), fleet.WorkloadName("router", r.Name)+".yaml")
			var spec struct {
				Kind string `json:"kind"`
			}
			require.NoError(t, yaml.Unmarshal(data, &spec))
			require.Equal(t, kind, spec.Kind)
			var tmpl corev1.PodTemplateSpec
			if kind == fleet.KindDaemonSet {
				var ds appsv1.DaemonSet
				require.NoError(t, yaml.UnmarshalStrict(data, &ds), r.Name)
				tmpl = ds.Spec.Template
			} else {
				var d appsv1.Deployment
				require.NoError(t, yaml.UnmarshalStrict(data, &d), r.Name)
				require.Equal(t, int32(2), *d.Spec.Replicas)
				tmpl = d.Spec.Template
			}
			pod := tmpl.Spec
			require.Equal(t, "nvidia", *pod.RuntimeClassName)
			require.Equal(t, r.Image, pod.Containers[0].Image)
			require.Contains(t, pod.Containers[0].Image, "@sha256:")
			require.Equal(t, fleet.Env(), pod.Containers[0].Env)
			require.NotEmpty(t, pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
		}
	}
	_, err := fleet.Objects(releases, fleet.Options{App: "router", Kind: "StatefulSet"})
	require.ErrorContains(t, err, "StatefulSet")
}

func TestReleasesFromReport(t *testing.T) {
	shipped := shippedReleases(t)
	rep := &imagebuild.Report{}
	for i, r := range shipped {
		kv := map[string]string{matrix.KeyRelease: r.Name, matrix.KeyJetPack: r.Meta.JetPack, matrix.KeyL4T: r.Meta.L4T,
			matrix.KeyCUDA: r.Meta.CUDA, matrix.KeySMTargets: strings.Join(r.Meta.Targets, ","), matrix.KeyTier: r.Meta.Tier}
		rr := imagebuild.ReleaseReport{Name: r.Name, Outcome: imagebuild.Succeeded, Digest: "sha256:" + strings.Repeat(string(rune('a'+i)), 64),
			Repository: "registry.example/router", Annotations: kv}
		if i == 0 {
			rr.Outcome, rr.Digest = imagebuild.Failed, ""
		}
		rep.Releases = append(rep.Releases, rr)
	}
	got, err := fleet.ReleasesFromReport("build.json", rep)
	require.NoError(t, err)
	require.Len(t, got, len(shipped)-1)
	require.Equal(t, "registry.example/router@sha256:"+strings.Repeat("b", 64), got[0].Image)
	require.Equal(t, shipped[1].Meta.JetPack, got[0].Meta.JetPack)

	rep.Releases[1].Repository = ""
	_, err = fleet.ReleasesFromReport("build.json", rep)
	require.ErrorContains(t, err, "build.json: release "+shipped[1].Name+" was not pushed")
	_, err = fleet.ReleasesFromReport("build.json", &imagebuild.Report{})
	require.ErrorContains(t, err, "lists no built release")

	// A hand-written file hears of every missing annotation at once.
	rep.Releases[1].Repository = "registry.example/router"
	rep.Releases[1].Annotations = map[string]string{matrix.KeyRelease: shipped[1].Name, matrix.KeyJetPack: shipped[1].Meta.JetPack}
	_, err = fleet.ReleasesFromReport("build.json", rep)
	require.EqualError(t, err, "build.json: release "+shipped[1].Name+" has no annotation io.jetbake.l4t, io.jetbake.cuda, io.jetbake.sm-targets: "+
		"give the file 'jetbake build --push --metadata-file' wrote, or write them (docs/fleets.md#where-the-digests-come-from)")
}
