package kubebed

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jetbake/jetbake/builder/fleet"
)

// Placement is the placement table: every node, sorted by name, with the
// images of the pods of namespace bound to it; a terminating pod counts
// until its node's kubelet (KeepReady) has deleted it for good.
func Placement(ctx context.Context, c kubernetes.Interface, namespace string) ([]Row, error) {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	byNode := map[string]*Row{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		r := byNode[p.Spec.NodeName]
		if r == nil {
			r = &Row{Node: p.Spec.NodeName}
			byNode[p.Spec.NodeName] = r
		}
		for _, ctr := range p.Spec.Containers {
			r.Images = append(r.Images, ctr.Image)
			w := p.Labels[fleet.LabelRelease]
			if w == "" {
				w = p.Labels[fleet.LabelApp] // the labeller's pods
			}
			r.Workloads = append(r.Workloads, w)
		}
	}
	rows := make([]Row, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		if r := byNode[n.Name]; r != nil {
			rows = append(rows, *r)
		} else {
			rows = append(rows, Row{Node: n.Name})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Node < rows[j].Node })
	return rows, nil
}

// Pending counts the pods of namespace not yet bound to a node.
func Pending(ctx context.Context, c kubernetes.Interface, namespace string) (int, error) {
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Spec.NodeName == "" {
			n++
		}
	}
	return n, nil
}

// Table is the placement table as text, one row a line.
func Table(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintln(&b, r)
	}
	return b.String()
}

// Events lists the last events of namespace, one a line, for failure
// messages.
func Events(ctx context.Context, c kubernetes.Interface, namespace string) string {
	evs, err := c.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	items := evs.Items
	if len(items) > 20 {
		items = items[len(items)-20:]
	}
	for _, e := range items {
		fmt.Fprintf(&b, "%s %s/%s: %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	return b.String()
}
