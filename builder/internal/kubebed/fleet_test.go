package kubebed_test

import (
	"context"
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

// TestFleetOnRealControlPlane: jetbake fleet's DaemonSets, applied with
// server-side apply to a real control plane whose nodes carry the labels
// doctor writes for the test bed's host views, give every Jetson node
// exactly the image pick chooses for it and the amd64 node none; a node
// upgraded to a newer JetPack moves to that release's pod.
func TestFleetOnRealControlPlane(t *testing.T) {
	bin, err := kubebed.Find(repoRoot)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	cp, err := kubebed.Start(ctx, bin, t.TempDir(), "daemonset,deployment,replicaset,serviceaccount,nodelifecycle")
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
	for _, v := range views {
		require.NoError(t, kubebed.RegisterNode(ctx, cp.Client, v.Name, "arm64"))
		require.NoError(t, labeler.Apply(ctx, v.Name, v.Labels), v.Name)
		want[v.Name], byName[v.Name] = v.Want, v
		names = append(names, v.Name)
	}
	kubelets := make(chan struct{})
	go func() {
		defer close(kubelets)
		kubebed.KeepReady(ctx, cp.Client, names, 2*time.Second, func(err error) { t.Logf("heartbeat: %v", err) })
	}()
	defer func() { cancel(); <-kubelets }()

	const ns = "jetsons"
	_, err = cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	objs, err := fleet.Objects(releases, fleet.Options{App: "router", Kind: fleet.KindDaemonSet})
	require.NoError(t, err)
	files, err := fleet.Render(objs, ns)
	require.NoError(t, err)
	applied, err := kubebed.ApplyFiles(ctx, cp.Config, ns, files)
	require.NoError(t, err)
	t.Logf("applied %s", strings.Join(applied, ", "))
	dss, err := cp.Client.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, dss.Items)
	for _, ds := range dss.Items {
		require.True(t, slices.ContainsFunc(ds.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
			return f.Manager == kubebed.FieldManager && f.Operation == metav1.ManagedFieldsOperationApply
		}), "%s is not server-side applied by %s", ds.Name, kubebed.FieldManager)
	}

	rows := placed(ctx, t, cp, ns, want)
	t.Logf("placement (node -> image):\n%s", kubebed.Table(rows))
	jetsons := 0
	for _, v := range views {
		if v.Want != "" {
			jetsons++
		}
	}
	require.GreaterOrEqual(t, jetsons, 6, "host views with a release")

	// An upgraded device: orin-jp6 flashed to JetPack 7.2 relabels itself.
	from, to := byName["orin-jp6"], byName["orin-jp7.2"]
	require.NotEqual(t, from.Want, to.Want, "the upgrade must change the release")
	require.NoError(t, labeler.Apply(ctx, from.Name, to.Labels))
	want[from.Name] = to.Want
	rows = placed(ctx, t, cp, ns, want)
	t.Logf("after orin-jp6 is upgraded to JetPack 7.2 (node -> image):\n%s", kubebed.Table(rows))
	t.Logf("test bed and checks took %s", time.Since(start).Round(time.Millisecond))
}
