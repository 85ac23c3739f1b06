package fleet_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/matrix"
)

// shippedServing is the serving of the shipped matrix with every flag set.
func shippedServing(t *testing.T) fleet.Serving {
	t.Helper()
	m, err := matrix.Load(filepath.Join("..", "..", "matrix.json"))
	require.NoError(t, err)
	ports, err := fleet.ImagePorts(m)
	require.NoError(t, err)
	require.Equal(t, []corev1.ContainerPort{{Name: "tcp-80", ContainerPort: 80, Protocol: corev1.ProtocolTCP}}, ports, "the matrix's 80/tcp")
	require.Equal(t, "/health", fleet.DefaultHealthPath(m), "TEI's router")
	cache, err := fleet.ParseCacheVolume("hostPath:/var/lib/jetbake/models", fleet.DefaultCachePath)
	require.NoError(t, err)
	res, err := fleet.Resources(map[string]string{"cpu": "2", "memory": "2Gi", "memory-limit": "4Gi"})
	require.NoError(t, err)
	env, err := fleet.ParseEnv("MAX_BATCH_TOKENS=8192")
	require.NoError(t, err)
	return fleet.Serving{Ports: ports, HealthPath: fleet.DefaultHealthPath(m), Cache: cache, Resources: res, Env: []corev1.EnvVar{env},
		Args: append(fleet.ImageCmd(m), "--model-id", "BAAI/bge-small-en-v1.5")}
}

// Every release's pod serves: the image's port, probes on TEI's /health,
// the router's args after the image's CMD, the env after the entrypoint's,
// the model cache at /data and the resources; one Service selects every
// release's pods; the Namespace comes first.
func TestServingWorkloads(t *testing.T) {
	releases := shippedReleases(t)
	objs, err := fleet.Objects(releases, fleet.Options{App: "embedder", Kind: fleet.KindDeployment, Replicas: 1, Namespace: "edge", Serving: shippedServing(t)})
	require.NoError(t, err)
	files, err := fleet.Render(objs, "edge")
	require.NoError(t, err)
	require.Contains(t, string(files["kustomization.yaml"]), "resources:\n- namespace.yaml\n")
	require.True(t, strings.HasPrefix(string(fleet.Stream(files)), "---\n# namespace.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: edge\n"), string(fleet.Stream(files)))

	var svc corev1.Service
	require.NoError(t, yaml.UnmarshalStrict(files["service.yaml"], &svc))
	require.Equal(t, "embedder", svc.Name)
	require.Equal(t, "edge", svc.Namespace)
	require.Equal(t, map[string]string{fleet.LabelApp: "embedder"}, svc.Spec.Selector, "one Service over every release")
	require.Equal(t, []corev1.ServicePort{{Name: "tcp-80", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("tcp-80")}}, svc.Spec.Ports)

	workloads := 0
	for _, r := range releases {
		data, ok := files[fleet.WorkloadName("embedder", r.Name)+".yaml"]
		if !ok {
			continue
		}
		workloads++
		var d appsv1.Deployment
		require.NoError(t, yaml.UnmarshalStrict(data, &d), r.Name)
		require.Equal(t, "edge", d.Namespace)
		labels := d.Spec.Template.Labels
		require.Equal(t, "embedder", labels[fleet.LabelApp], "the Service's selector")
		require.Equal(t, fleet.WorkloadName("embedder", r.Name), labels[fleet.LabelRelease], "the release's own label")
		c := d.Spec.Template.Spec.Containers[0]
		require.Equal(t, int32(80), c.Ports[0].ContainerPort)
		require.Equal(t, []string{"--json-output", "--model-id", "BAAI/bge-small-en-v1.5"}, c.Args)
		require.Equal(t, append(fleet.Env(), corev1.EnvVar{Name: "MAX_BATCH_TOKENS", Value: "8192"}), c.Env)
		for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
			require.NotNil(t, p)
			require.Equal(t, "/health", p.HTTPGet.Path)
			require.Equal(t, intstr.FromString("tcp-80"), p.HTTPGet.Port)
		}
		require.Equal(t, []corev1.VolumeMount{{Name: "model-cache", MountPath: "/data"}}, c.VolumeMounts)
		vol := d.Spec.Template.Spec.Volumes[0]
		require.Equal(t, "/var/lib/jetbake/models", vol.HostPath.Path)
		require.Equal(t, corev1.HostPathDirectoryOrCreate, *vol.HostPath.Type)
		require.Equal(t, "2", c.Resources.Requests.Cpu().String())
		require.Equal(t, "4Gi", c.Resources.Limits.Memory().String())
		_, hasGPU := c.Resources.Limits["nvidia.com/gpu"]
		require.False(t, hasGPU, "NVIDIA's runtime gives the GPU; no device plugin resource")
	}
	require.GreaterOrEqual(t, workloads, 4)
}

// What is written is what a user would write: no status, no empty object,
// no null, for every kind of object and without serving flags too.
func TestRenderedYAMLHasNoEmptyFields(t *testing.T) {
	releases := shippedReleases(t)
	for _, o := range []fleet.Options{
		{App: "router", Kind: fleet.KindDaemonSet},
		{App: "router", Kind: fleet.KindDeployment, Replicas: 2, Namespace: "edge", Serving: shippedServing(t)},
	} {
		objs, err := fleet.Objects(releases, o)
		require.NoError(t, err)
		for f, obj := range fleet.Labeller("registry.example/jetbake@sha256:"+strings.Repeat("c", 64), o.Namespace) {
			objs[f] = obj
		}
		files, err := fleet.Render(objs, o.Namespace)
		require.NoError(t, err)
		for name, data := range files {
			for _, bad := range []string{"status:", "{}", "null", "[]", "creationTimestamp"} {
				require.NotContains(t, string(data), bad, "%s of %s", name, o.Kind)
			}
		}
	}
	// An empty object that means something stays.
	m, err := fleet.Clean(&corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"name": "scratch", "emptyDir": map[string]any{}}, m)
}

func TestServingFlagsBadInput(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"hostPath", `--cache-volume "hostPath" is not KIND:VALUE: write hostPath:/var/lib/jetbake/models (a folder on each node) or pvc:NAME (a PersistentVolumeClaim in the namespace)`},
		{"hostPath:data", `--cache-volume "hostPath:data": host path "data" is not a clean absolute folder other than /`},
		{"pvc:Models_1", `--cache-volume "pvc:Models_1": claim name "Models_1" is not a Kubernetes name`},
		{"nfs:server:/x", `--cache-volume "nfs:server:/x": kind "nfs" is neither hostPath nor pvc`},
	} {
		_, err := fleet.ParseCacheVolume(tt.in, "/data")
		require.ErrorContains(t, err, tt.want, tt.in)
	}
	_, err := fleet.ParseCacheVolume("pvc:models", "data")
	require.EqualError(t, err, `--cache-path "data" is not a clean absolute path: give the folder the router keeps its models in, e.g. /data`)
	v, err := fleet.ParseCacheVolume("pvc:models", "/data")
	require.NoError(t, err)
	require.Equal(t, &fleet.CacheVolume{Claim: "models", MountPath: "/data"}, v)

	_, err = fleet.ParseEnv("MODEL_ID")
	require.EqualError(t, err, `--env "MODEL_ID" has no '=': write NAME=VALUE, e.g. --env MAX_BATCH_TOKENS=8192`)
	_, err = fleet.ParseEnv("1X=2")
	require.ErrorContains(t, err, `--env "1X=2": "1X" is not an environment variable name Kubernetes takes`)
	e, err := fleet.ParseEnv("A=b=c")
	require.NoError(t, err)
	require.Equal(t, corev1.EnvVar{Name: "A", Value: "b=c"}, e)

	_, err = fleet.Resources(map[string]string{"memory": "2GB!"})
	require.EqualError(t, err, `--memory "2GB!" is not a positive Kubernetes quantity: write it as 4Gi or 512Mi`)
	_, err = fleet.Resources(map[string]string{"cpu": "0"})
	require.ErrorContains(t, err, `--cpu "0" is not a positive Kubernetes quantity`)
	_, err = fleet.Resources(map[string]string{"memory": "8Gi", "memory-limit": "4Gi"})
	require.EqualError(t, err, "--memory 8Gi is more than --memory-limit 4Gi: Kubernetes refuses a request above its limit; raise the limit or lower the request")
	res, err := fleet.Resources(map[string]string{})
	require.NoError(t, err)
	require.Equal(t, corev1.ResourceRequirements{}, res)
}

// A bad --name says what Kubernetes' rule is and gives a name that keeps it.
func TestBadName(t *testing.T) {
	for _, tt := range []struct{ name, fix string }{{"Bad_Name", "bad-name"}, {"9lives", "lives"}, {"router.v2", "router-v2"}} {
		_, err := fleet.Objects(shippedReleases(t), fleet.Options{App: tt.name, Kind: fleet.KindDaemonSet})
		require.EqualError(t, err, `--name "`+tt.name+`" is not a Kubernetes name: it names the Service and the workloads, so it is lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (a DNS-1123 label that a Service also takes); write e.g. --name `+tt.fix)
		require.NoError(t, fleet.CheckName(tt.fix))
	}
	_, err := fleet.Objects(shippedReleases(t), fleet.Options{App: strings.Repeat("r", 60), Kind: fleet.KindDaemonSet})
	require.ErrorContains(t, err, "more than the 63 of a Kubernetes name: give --name a shorter name")
	_, err = fleet.Objects(shippedReleases(t), fleet.Options{App: "router", Kind: fleet.KindDaemonSet, Namespace: "Edge"})
	require.ErrorContains(t, err, `--namespace "Edge" is not a Kubernetes namespace name`)
}

// The probe's route is the matrix's "health": the router's or an app's;
// TEI's /health for a TEI router written before the field; none for
// another router or an app without it.
func TestDefaultHealthPath(t *testing.T) {
	for _, tt := range []struct {
		m    matrix.Matrix
		want string
	}{
		{matrix.Matrix{Router: matrix.Router{Name: "text-embeddings-router", Health: "/health"}}, "/health"},
		{matrix.Matrix{Router: matrix.Router{Name: "text-embeddings-router"}}, "/health"},
		{matrix.Matrix{Router: matrix.Router{Name: "my-router", Health: "/ready"}}, "/ready"},
		{matrix.Matrix{Router: matrix.Router{Name: "my-router"}}, ""},
		{matrix.Matrix{App: &matrix.App{Name: "obliteratus", Health: "/healthz"}}, "/healthz"},
		{matrix.Matrix{App: &matrix.App{Name: "obliteratus"}}, ""},
	} {
		require.Equal(t, tt.want, fleet.DefaultHealthPath(&tt.m), "%+v", tt.m)
	}
}
