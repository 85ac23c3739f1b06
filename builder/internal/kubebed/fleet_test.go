package kubebed_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/internal/kubebed"
	"github.com/jetbake/jetbake/builder/matrix"
)

const repoRoot = "../../.."

// placed waits (60 s at most) until the nodes hold the images want gives
// them; it fails with the table, the events and the programs' logs.
func placed(ctx context.Context, t *testing.T, cp *kubebed.ControlPlane, ns string, want map[string]string) []kubebed.Row {
	t.Helper()
	rows, err := kubebed.WaitPlaced(ctx, cp.Client, ns, want, 60*time.Second)
	require.NoError(t, err, "scheduler:\n%s\ncontroller manager:\n%s", cp.LogTail("kube-scheduler"), cp.LogTail("kube-controller-manager"))
	return rows
}

// deployedOn waits (60 s at most) until the Deployments have rolled out on
// the nodes want gives their images.
func deployedOn(ctx context.Context, t *testing.T, cp *kubebed.ControlPlane, ns string, want map[string]string) []kubebed.Row {
	t.Helper()
	rows, err := kubebed.WaitDeployed(ctx, cp.Client, ns, want, 60*time.Second)
	require.NoError(t, err, "scheduler:\n%s\ncontroller manager:\n%s", cp.LogTail("kube-scheduler"), cp.LogTail("kube-controller-manager"))
	return rows
}

// serving is what a user serving TEI gives jetbake fleet for the shipped
// matrix: its port and health route, a model, a cache on each node and
// resources.
func serving(t *testing.T, cache string) fleet.Serving {
	t.Helper()
	m, err := matrix.Load(filepath.Join(repoRoot, "matrix.json"))
	require.NoError(t, err)
	s := fleet.Serving{HealthPath: fleet.DefaultHealthPath(m), Args: append(fleet.ImageCmd(m), "--model-id", "BAAI/bge-small-en-v1.5")}
	s.Ports, err = fleet.ImagePorts(m)
	require.NoError(t, err)
	s.Cache, err = fleet.ParseCacheVolume(cache, fleet.DefaultCachePath)
	require.NoError(t, err)
	s.Resources, err = fleet.Resources(map[string]string{"cpu": "1", "memory": "1Gi", "memory-limit": "4Gi"})
	require.NoError(t, err)
	return s
}

// render is jetbake fleet's files for the releases.
func render(t *testing.T, releases []fleet.Release, o fleet.Options) map[string][]byte {
	t.Helper()
	objs, err := fleet.Objects(releases, o)
	require.NoError(t, err)
	files, err := fleet.Render(objs, o.Namespace)
	require.NoError(t, err)
	return files
}

// TestFleetOnRealControlPlane: everything jetbake fleet writes (Namespace,
// Service, workloads with probes, volumes and resources, RuntimeClass, the
// labeller and its RBAC) is accepted by a real kube-apiserver with
// server-side apply and dry-run. Applied to a real control plane whose nodes
// carry the labels doctor writes for the test bed's host views, the
// DaemonSets and the Deployments give every Jetson node only the image pick
// chooses for it and the amd64 node none, and one Service reaches every
// release's pods. A node upgraded to a newer JetPack moves to that
// release's pod, and a release's new digest rolls its pods.
func TestFleetOnRealControlPlane(t *testing.T) {
	bin, err := kubebed.Find(repoRoot)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	cp, err := kubebed.Start(ctx, bin, t.TempDir(), "daemonset,deployment,replicaset,serviceaccount,nodelifecycle,endpointslice")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cp.Close()) })
	t.Logf("control plane ready in %s", time.Since(start).Round(time.Millisecond))

	releases, err := kubebed.ShippedReleases(repoRoot, t.TempDir())
	require.NoError(t, err)
	views, err := kubebed.HostNodes(ctx, releases, t.TempDir())
	require.NoError(t, err)

	httpClient, err := rest.HTTPClientFor(cp.Config)
	require.NoError(t, err)
	labeler := &fleet.NodeLabeler{Server: cp.Config.Host, Client: httpClient}
	want := map[string]string{"amd64-worker": ""}
	names := []string{"amd64-worker"}
	require.NoError(t, kubebed.RegisterNode(ctx, cp.Client, "amd64-worker", "amd64"))
	byName := map[string]kubebed.HostNode{}
	jetsons := 0
	for _, v := range views {
		require.NoError(t, kubebed.RegisterNode(ctx, cp.Client, v.Name, "arm64"))
		require.NoError(t, labeler.Apply(ctx, v.Name, v.Labels), v.Name)
		want[v.Name], byName[v.Name] = v.Want, v
		names = append(names, v.Name)
		if v.Want != "" {
			jetsons++
		}
	}
	require.GreaterOrEqual(t, jetsons, 6, "host views with a release")
	kubelets := make(chan struct{})
	go func() {
		defer close(kubelets)
		kubebed.KeepReady(ctx, cp.Client, names, 2*time.Second, func(err error) { t.Logf("kubelet: %v", err) })
	}()
	defer func() { cancel(); <-kubelets }()

	const dsNS, depNS = "jetsons", "edge"
	dsOpts := fleet.Options{App: "router", Kind: fleet.KindDaemonSet, Namespace: dsNS, Serving: serving(t, "hostPath:/var/lib/jetbake/models")}
	depOpts := fleet.Options{App: "router", Kind: fleet.KindDeployment, Replicas: 2, Namespace: depNS, Serving: dsOpts.Serving}
	acceptedByDryRun(ctx, t, cp, releases, dsOpts)

	for _, o := range []fleet.Options{dsOpts, depOpts} {
		applied, err := kubebed.ApplyFiles(ctx, cp.Config, o.Namespace, render(t, releases, o))
		require.NoError(t, err)
		t.Logf("applied in %s: %s", o.Namespace, strings.Join(applied, ", "))
	}
	dss, err := cp.Client.AppsV1().DaemonSets(dsNS).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, dss.Items)
	for _, ds := range dss.Items {
		require.True(t, slices.ContainsFunc(ds.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
			return f.Manager == kubebed.FieldManager && f.Operation == metav1.ManagedFieldsOperationApply
		}), "%s is not server-side applied by %s", ds.Name, kubebed.FieldManager)
	}

	rows := placed(ctx, t, cp, dsNS, want)
	t.Logf("DaemonSets, placement (node -> image):\n%s", kubebed.Table(rows))
	rows = deployedOn(ctx, t, cp, depNS, want)
	t.Logf("Deployments (2 replicas each), placement (node -> images):\n%s", kubebed.Table(rows))
	eps := serviceReachesEveryRelease(ctx, t, cp, dsNS, rows)
	t.Logf("Service router in %s, its endpoints (IP, node, workload):\n%s", dsNS, kubebed.EndpointTable(eps))

	labellerOnArm64(ctx, t, cp, names)
	upgrade(ctx, t, cp, labeler, byName, want)
	newDigest(ctx, t, cp, releases, want, dsOpts, depOpts)
	t.Logf("test bed and checks took %s", time.Since(start).Round(time.Millisecond))
}

// acceptedByDryRun applies, after the Namespace, every object fleet
// writes with the labeller and a PersistentVolumeClaim cache, both kinds,
// as a server-side dry run: the API server defaults, validates and admits
// each one, and stores none.
func acceptedByDryRun(ctx context.Context, t *testing.T, cp *kubebed.ControlPlane, releases []fleet.Release, o fleet.Options) {
	t.Helper()
	files := render(t, releases, o)
	_, err := kubebed.ApplyFiles(ctx, cp.Config, o.Namespace, map[string][]byte{"namespace.yaml": files["namespace.yaml"]})
	require.NoError(t, err)
	pvc := o
	pvc.Kind, pvc.Replicas, pvc.Serving.Cache = fleet.KindDeployment, 3, &fleet.CacheVolume{Claim: "models", MountPath: "/data"}
	objs, err := fleet.Objects(releases, pvc)
	require.NoError(t, err)
	maps.Copy(objs, fleet.Labeller("registry.example/jetbake@sha256:"+strings.Repeat("c", 64), o.Namespace))
	rendered, err := fleet.Render(objs, o.Namespace)
	require.NoError(t, err)
	all := maps.Clone(files)
	for name, data := range rendered {
		if _, ok := all[name]; ok && strings.HasPrefix(name, "router-") {
			name = "deployment-" + name // the Deployments beside the DaemonSets
		}
		all[name] = data
	}
	applied, err := kubebed.ApplyFiles(ctx, cp.Config, o.Namespace, all, kubebed.DryRun())
	require.NoError(t, err)
	for _, kind := range []string{"Namespace/", "Service/router", "DaemonSet/router-", "Deployment/router-", "RuntimeClass/nvidia",
		"ServiceAccount/" + fleet.LabellerName, "ClusterRole/" + fleet.LabellerName, "ClusterRoleBinding/" + fleet.LabellerName, "DaemonSet/" + fleet.LabellerName} {
		require.True(t, slices.ContainsFunc(applied, func(a string) bool { return strings.HasPrefix(a, kind) }), "%s in %v", kind, applied)
	}
	t.Logf("accepted by server-side apply --dry-run=server: %s", strings.Join(applied, ", "))
	_, err = cp.Client.AppsV1().DaemonSets(o.Namespace).Get(ctx, fleet.LabellerName, metav1.GetOptions{})
	require.Error(t, err, "a dry run stores nothing")
}

// serviceReachesEveryRelease waits until the Service's endpoints are the
// namespace's pods, every release's among them, each ready.
func serviceReachesEveryRelease(ctx context.Context, t *testing.T, cp *kubebed.ControlPlane, ns string, _ []kubebed.Row) []kubebed.Endpoint {
	t.Helper()
	svc, err := cp.Client.CoreV1().Services(ns).Get(ctx, "router", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, svc.Spec.ClusterIP)
	var eps []kubebed.Endpoint
	require.Eventually(t, func() bool {
		rows, err := kubebed.Placement(ctx, cp.Client, ns)
		require.NoError(t, err)
		pods, workloads := 0, map[string]bool{}
		for _, r := range rows {
			pods += len(r.Images)
			for _, w := range r.Workloads {
				workloads[w] = true
			}
		}
		eps, err = kubebed.Endpoints(ctx, cp.Client, ns, "router")
		require.NoError(t, err)
		got := map[string]bool{}
		for _, e := range eps {
			if e.Ready {
				got[e.Workload] = true
			}
		}
		return len(eps) == pods && maps.Equal(got, workloads) && len(got) >= 4
	}, 60*time.Second, 500*time.Millisecond, "endpoints of Service router:\n%s", kubebed.EndpointTable(eps))
	return eps
}

// upgrade flashes to JetPack 7.2 the JetPack 6.2 Orin that runs a pod of
// the jetpack6.2 Deployment: it relabels itself; its DaemonSet pod moves to
// the 7.2 release, and its Deployment pod stays (IgnoredDuringExecution)
// until the node is drained, as before a reboot, then comes back on a node
// 6.2 fits.
func upgrade(ctx context.Context, t *testing.T, cp *kubebed.ControlPlane, labeler *fleet.NodeLabeler, byName map[string]kubebed.HostNode, want map[string]string) {
	t.Helper()
	deployed, err := cp.Client.CoreV1().Pods("edge").List(ctx, metav1.ListOptions{LabelSelector: fleet.LabelRelease + "=router-jetpack6-2"})
	require.NoError(t, err)
	require.NotEmpty(t, deployed.Items)
	from, to := byName[deployed.Items[0].Spec.NodeName], byName["orin-jp7.2"]
	require.NotEmpty(t, from.Name, "a host view runs the jetpack6.2 Deployment's pod")
	require.NotEqual(t, from.Want, to.Want, "the upgrade must change the release")
	require.NoError(t, labeler.Apply(ctx, from.Name, to.Labels))
	want[from.Name] = to.Want
	rows := placed(ctx, t, cp, "jetsons", want)
	t.Logf("after %s is upgraded to JetPack 7.2, DaemonSets (node -> image):\n%s", from.Name, kubebed.Table(rows))

	pods, err := cp.Client.CoreV1().Pods("edge").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + from.Name})
	require.NoError(t, err)
	require.NotEmpty(t, pods.Items, "the Deployment's pod stays on the relabelled node until it is drained")
	for _, p := range pods.Items {
		require.Equal(t, from.Want, p.Spec.Containers[0].Image, "a Deployment's pod stays until the node is drained")
		require.NoError(t, cp.Client.CoreV1().Pods("edge").Delete(ctx, p.Name, metav1.DeleteOptions{}))
	}
	rows = deployedOn(ctx, t, cp, "edge", want)
	t.Logf("after %s is drained (%d pods of JetPack 6.2 evicted), Deployments (node -> images):\n%s", from.Name, len(pods.Items), kubebed.Table(rows))
}

// newDigest is a new build of the jetpack7.2 release: its workloads get the
// new digest, and the controllers roll every pod of it to the new image.
func newDigest(ctx context.Context, t *testing.T, cp *kubebed.ControlPlane, releases []fleet.Release, want map[string]string, opts ...fleet.Options) {
	t.Helper()
	rebuilt := slices.Clone(releases)
	i := slices.IndexFunc(rebuilt, func(r fleet.Release) bool { return r.Name == "jetpack7.2" })
	require.GreaterOrEqual(t, i, 0)
	old := rebuilt[i].Image
	repo, _, _ := strings.Cut(old, "@")
	rebuilt[i].Image = repo + "@sha256:" + strings.Repeat("f", 64)
	moved := 0
	for node, img := range want {
		if img == old {
			want[node] = rebuilt[i].Image
			moved++
		}
	}
	require.GreaterOrEqual(t, moved, 2)
	for _, o := range opts {
		_, err := kubebed.ApplyFiles(ctx, cp.Config, o.Namespace, render(t, rebuilt, o))
		require.NoError(t, err)
	}
	rows := placed(ctx, t, cp, "jetsons", want)
	t.Logf("after jetpack7.2 is rebuilt (new digest), DaemonSets rolled (node -> image):\n%s", kubebed.Table(rows))
	rows = deployedOn(ctx, t, cp, "edge", want)
	t.Logf("after jetpack7.2 is rebuilt, Deployments rolled (node -> images):\n%s", kubebed.Table(rows))
	rss, err := cp.Client.AppsV1().ReplicaSets("edge").List(ctx, metav1.ListOptions{LabelSelector: fleet.LabelRelease + "=router-jetpack7-2"})
	require.NoError(t, err)
	require.Len(t, rss.Items, 2, "the rolling update made a second ReplicaSet")
	for _, rs := range rss.Items {
		img := rs.Spec.Template.Spec.Containers[0].Image
		if img == old {
			require.Equal(t, int32(0), *rs.Spec.Replicas, "the old ReplicaSet is scaled down")
		} else {
			require.Equal(t, rebuilt[i].Image, img)
			require.Equal(t, int32(2), *rs.Spec.Replicas)
		}
	}
}

// labellerOnArm64 applies the labelling DaemonSet (its image never runs
// here) in a namespace of its own: it places a pod on every arm64 node and
// none on the amd64 one.
func labellerOnArm64(ctx context.Context, t *testing.T, cp *kubebed.ControlPlane, nodes []string) {
	t.Helper()
	const ns = "jetbake-system"
	_, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// With a declared row, as a matrix declaring a JetPack newer than
	// jetbake gives it: the ConfigMap of facts it mounts is applied too.
	declared, err := matrix.ParseDeclaredJetPack(`{"jetpack":"7.3","l4t":"39.3.0","cuda":"13.3","ubuntu":"24.04","flavour":"sbsa","rule":"driver-cuda","sms":["8.7","11.0"],` +
		`"driver_dirs":[{"dir":"/opt/nvidia/l4t-gpu-libs/openrm","family":"Thor","driver":{"name":"OpenRM","nodes":[["/dev/nvidiactl"],["/dev/nvidia0"]]}}]}`)
	require.NoError(t, err)
	files, err := fleet.Render(fleet.Labeller("registry.example/jetbake@sha256:"+strings.Repeat("c", 64), ns, declared), ns)
	require.NoError(t, err)
	require.Contains(t, files, "labeller-facts-configmap.yaml")
	require.NoError(t, err)
	_, err = kubebed.ApplyFiles(ctx, cp.Config, ns, files)
	require.NoError(t, err)
	want := map[string]string{}
	for _, n := range nodes {
		want[n] = "registry.example/jetbake@sha256:" + strings.Repeat("c", 64)
	}
	want["amd64-worker"] = ""
	rows := placed(ctx, t, cp, ns, want)
	t.Logf("the labelling DaemonSet (node -> image):\n%s", kubebed.Table(rows))
}
