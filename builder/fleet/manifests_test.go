package fleet_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/jetbake/jetbake/builder/fleet"
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
