package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/kubebed"
	"github.com/jetbake/jetbake/builder/matrix"
)

// printFleet places the shipped matrix's images, as this demo pushed them
// (metadata is its build report), on a real Kubernetes control plane whose
// nodes carry the labels `jetbake doctor --node-labels` reads on each test
// bed host view (the declared JetPack 7.3's with the declared rows, as
// `jetbake doctor --facts` reads them): `jetbake fleet`'s DaemonSets, server-side applied, and the
// real DaemonSet controller and scheduler decide; every node must hold
// the image pick chooses for its host, and the table says where each went.
func printFleet(ctx context.Context, out io.Writer, root, work, metadata string, report *imagebuild.Report) error {
	bin, err := kubebed.Find(root)
	if err != nil {
		return err
	}
	releases, err := fleet.ReleasesFromReport(metadata, report)
	if err != nil {
		return err
	}
	dir := filepath.Join(work, "fleet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	views, err := kubebed.HostNodes(ctx, releases, dir)
	if err != nil {
		return err
	}
	// The declared JetPack 7.3's host views, labelled as `jetbake doctor
	// --facts jetson-facts.json` labels them.
	table, _, err := matrix.LoadFacts(filepath.Join(work, e2e.DeclaredFactsFile))
	if err != nil {
		return err
	}
	declared, err := kubebed.HostNodesOf(ctx, releases, dir, e2e.DeclaredHostViews(), hostfit.SysrootReader{Table: table})
	if err != nil {
		return err
	}
	views = append(views, declared...)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fmt.Fprintf(out, "==> jetbake fleet on a Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler), nodes labelled by jetbake doctor on %d host views and an amd64 node\n", len(views))
	cp, err := kubebed.Start(ctx, bin, filepath.Join(dir, "control-plane"), "daemonset,deployment,replicaset,serviceaccount,nodelifecycle")
	if err != nil {
		return err
	}
	defer cp.Close()
	httpClient, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		return err
	}
	labeler := &fleet.NodeLabeler{Server: cp.Config.Host, Client: httpClient}
	want, names := map[string]string{"amd64-worker": ""}, []string{"amd64-worker"}
	if err := kubebed.RegisterNode(ctx, cp.Client, "amd64-worker", "amd64"); err != nil {
		return err
	}
	for _, v := range views {
		if err := kubebed.RegisterNode(ctx, cp.Client, v.Name, "arm64"); err != nil {
			return err
		}
		if err := labeler.Apply(ctx, v.Name, v.Labels); err != nil {
			return err
		}
		want[v.Name] = v.Want
		names = append(names, v.Name)
	}
	kubelets := make(chan struct{})
	go func() {
		defer close(kubelets)
		kubebed.KeepReady(ctx, cp.Client, names, 2*time.Second, func(error) {})
	}()
	defer func() { cancel(); <-kubelets }()
	const ns = "jetsons"
	if _, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	objs, err := fleet.Objects(releases, fleet.Options{App: "router", Kind: fleet.KindDaemonSet})
	if err != nil {
		return err
	}
	files, err := fleet.Render(objs, ns)
	if err != nil {
		return err
	}
	if _, err := kubebed.ApplyFiles(ctx, cp.Config, ns, files); err != nil {
		return err
	}
	rows, err := kubebed.WaitPlaced(ctx, cp.Client, ns, want, 60*time.Second)
	if err != nil {
		return fmt.Errorf("jetbake fleet: %w", err)
	}
	fmt.Fprintf(out, "placement by Kubernetes (node -> workload and image), each as pick chooses for that host:\n%s", kubebed.Table(rows))
	return nil
}
