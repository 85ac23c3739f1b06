package kubebed_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/jetbake/jetbake/builder/doctor"
	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/kubebed"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

const repoRoot = "../../.."

// metadataFile writes a build report as `jetbake build --push
// --metadata-file` leaves it for the shipped matrix: every release pushed,
// with its digest and annotations (an audit that covers every target).
func metadataFile(t *testing.T) string {
	t.Helper()
	m, err := matrix.Load(filepath.Join(repoRoot, "matrix.json"))
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	rep := &imagebuild.Report{}
	for i, r := range p.Releases {
		var audit []string
		for _, tg := range r.Targets {
			audit = append(audit, tg.SM+"=runs")
		}
		r.Annotations[matrix.KeyAudit] = strings.Join(audit, ",")
		rep.Releases = append(rep.Releases, imagebuild.ReleaseReport{Name: r.Name, Outcome: imagebuild.Succeeded,
			Digest: "sha256:" + strings.Repeat(fmt.Sprintf("%x", i+10), 64), Repository: "registry.example/router", Annotations: r.Annotations})
	}
	path := filepath.Join(t.TempDir(), "build.json")
	require.NoError(t, rep.WriteFile(path))
	return path
}

// hostView is a test bed host as doctor reads it: its node labels and the
// image pick chooses for it ("" for none).
type hostView struct {
	name   string
	labels map[string]string
	want   string
}

// hostViews runs doctor on every test bed host view (with NVIDIA's runtime
// installed) and asks pick's rule for each one's image.
func hostViews(t *testing.T, releases []fleet.Release) []hostView {
	t.Helper()
	metas := make([]imagepick.Meta, len(releases))
	for i, r := range releases {
		metas[i] = r.Meta
	}
	var out []hostView
	for _, h := range e2e.HostViews() {
		root := t.TempDir()
		require.NoError(t, h.WriteFacts(root))
		rt := filepath.Join(root, "usr", "bin", "nvidia-container-runtime")
		require.NoError(t, os.MkdirAll(filepath.Dir(rt), 0o755))
		require.NoError(t, os.WriteFile(rt, []byte("#!/bin/sh\n"), 0o755))
		r, err := doctor.Run(context.Background(), doctor.WithSysroot(root))
		require.NoError(t, err, h.Name)
		v := hostView{name: h.Name, labels: r.NodeLabels()}
		if order := imagepick.Order(r.Host, metas, hostfit.Compatible); len(order) > 0 {
			v.want = releases[order[0]].Image
		}
		out = append(out, v)
	}
	return out
}

// placed waits (60 s at most) until every node holds exactly the images
// want gives it (none where it gives ""), with no pod left unbound.
func placed(ctx context.Context, t *testing.T, cp *kubebed.ControlPlane, ns string, want map[string]string) []kubebed.Row {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rows, err := kubebed.Placement(ctx, cp.Client, ns)
		require.NoError(t, err)
		pending, err := kubebed.Pending(ctx, cp.Client, ns)
		require.NoError(t, err)
		var wrong []string
		for _, r := range rows {
			w, ok := want[r.Node]
			require.True(t, ok, "node %s is not the test's", r.Node)
			if (w == "" && len(r.Images) > 0) || (w != "" && !slices.Equal(r.Images, []string{w})) {
				wrong = append(wrong, fmt.Sprintf("%s: want %q", r, w))
			}
		}
		if len(wrong) == 0 && pending == 0 && len(rows) == len(want) {
			return rows
		}
		if time.Now().After(deadline) {
			require.Failf(t, "pods not placed as pick chooses within 60 s", "%d pods unbound\n%s\nplacement now:\n%s\nevents:\n%s\nscheduler:\n%s\ncontroller manager:\n%s",
				pending, strings.Join(wrong, "\n"), kubebed.Table(rows), kubebed.Events(ctx, cp.Client, ns), cp.LogTail("kube-scheduler"), cp.LogTail("kube-controller-manager"))
		}
		time.Sleep(500 * time.Millisecond)
	}
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

	file := metadataFile(t)
	md, err := evidence.ReadMetadata(file)
	require.NoError(t, err)
	releases, err := fleet.ReleasesFromReport(file, md.Report)
	require.NoError(t, err)
	views := hostViews(t, releases)

	httpClient, err := rest.HTTPClientFor(cp.Config)
	require.NoError(t, err)
	labeler := &fleet.NodeLabeler{Server: cp.Config.Host, Client: httpClient}
	want := map[string]string{"amd64-worker": ""}
	names := []string{"amd64-worker"}
	require.NoError(t, kubebed.RegisterNode(ctx, cp.Client, "amd64-worker", "amd64"))
	byName := map[string]hostView{}
	for _, v := range views {
		require.NoError(t, kubebed.RegisterNode(ctx, cp.Client, v.name, "arm64"))
		require.NoError(t, labeler.Apply(ctx, v.name, v.labels), v.name)
		want[v.name], byName[v.name] = v.want, v
		names = append(names, v.name)
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
		if v.want != "" {
			jetsons++
		}
	}
	require.GreaterOrEqual(t, jetsons, 6, "host views with a release")

	// An upgraded device: orin-jp6 flashed to JetPack 7.2 relabels itself.
	from, to := byName["orin-jp6"], byName["orin-jp7.2"]
	require.NotEqual(t, from.want, to.want, "the upgrade must change the release")
	require.NoError(t, labeler.Apply(ctx, from.name, to.labels))
	want[from.name] = to.want
	rows = placed(ctx, t, cp, ns, want)
	t.Logf("after orin-jp6 is upgraded to JetPack 7.2 (node -> image):\n%s", kubebed.Table(rows))
	t.Logf("test bed and checks took %s", time.Since(start).Round(time.Millisecond))
}
