package kubebed

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jetbake/jetbake/builder/fleet"
)

// WaitDeployed polls until every Deployment of namespace whose image want
// gives some node has rolled out (all its replicas updated and available,
// no pod of an older ReplicaSet left), the pods of every other Deployment
// are unbound (no node fits them: a release built for a JetPack the
// cluster does not run), and every bound pod is on a node whose image in
// want is the pod's; it returns the placement table. After timeout it
// returns an error with what is wrong, the table and the events.
func WaitDeployed(ctx context.Context, c kubernetes.Interface, namespace string, want map[string]string, timeout time.Duration) ([]Row, error) {
	deadline := time.Now().Add(timeout)
	for {
		rows, wrong, err := deployedProblems(ctx, c, namespace, want)
		if err != nil {
			return nil, err
		}
		if len(wrong) == 0 {
			return rows, nil
		}
		if time.Now().After(deadline) {
			return rows, fmt.Errorf("deployments not rolled out on the nodes pick chooses within %s:\n%s\nplacement now:\n%s\nevents:\n%s",
				timeout, strings.Join(wrong, "\n"), Table(rows), Events(ctx, c, namespace))
		}
		select {
		case <-ctx.Done():
			return rows, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// deployedProblems lists what keeps namespace's Deployments from being
// rolled out on the right nodes.
func deployedProblems(ctx context.Context, c kubernetes.Interface, namespace string, want map[string]string) ([]Row, []string, error) {
	rows, err := Placement(ctx, c, namespace)
	if err != nil {
		return nil, nil, err
	}
	deps, err := c.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	wanted := map[string]bool{}
	for _, img := range want {
		wanted[img] = true
	}
	var wrong []string
	replicas, unplaceable := 0, 0
	for _, d := range deps.Items {
		n := *d.Spec.Replicas
		s := d.Status
		if !wanted[d.Spec.Template.Spec.Containers[0].Image] {
			unplaceable += int(n)
			if s.AvailableReplicas != 0 {
				wrong = append(wrong, fmt.Sprintf("deployment %s: %d replicas available on no node that fits", d.Name, s.AvailableReplicas))
			}
			continue
		}
		replicas += int(n)
		if s.ObservedGeneration < d.Generation || s.UpdatedReplicas != n || s.AvailableReplicas != n || s.Replicas != n {
			wrong = append(wrong, fmt.Sprintf("deployment %s: %d replicas, %d updated, %d available, %d in all", d.Name, n, s.UpdatedReplicas, s.AvailableReplicas, s.Replicas))
		}
	}
	pods := 0
	for _, r := range rows {
		for i, img := range r.Images {
			pods++
			if w := want[r.Node]; w != img {
				wrong = append(wrong, fmt.Sprintf("%s runs %s %s: want %q there", r.Node, r.Workloads[i], img, w))
			}
		}
	}
	pending, err := Pending(ctx, c, namespace)
	if err != nil {
		return nil, nil, err
	}
	if pods != replicas || pending != unplaceable {
		wrong = append(wrong, fmt.Sprintf("%d pods bound and %d unbound for %d replicas on nodes that fit and %d on none", pods, pending, replicas, unplaceable))
	}
	return rows, wrong, nil
}

// Endpoint is one row of the endpoint table: an address of a Service's
// EndpointSlices, the node and workload of the pod behind it, its image,
// and whether it is ready to serve.
type Endpoint struct {
	IP, Node, Workload, Image string
	Ready                     bool
}

// String is the row as the endpoint table prints it.
func (e Endpoint) String() string {
	return fmt.Sprintf("%-14s %-20s %-20s ready=%-5t %s", e.IP, e.Node, e.Workload, e.Ready, e.Image)
}

// Endpoints lists the addresses the EndpointSlice controller gave the
// Service, sorted by node, each with its pod's workload and image.
func Endpoints(ctx context.Context, c kubernetes.Interface, namespace, service string) ([]Endpoint, error) {
	slices, err := c.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return nil, err
	}
	var out []Endpoint
	for _, s := range slices.Items {
		for _, ep := range s.Endpoints {
			e := Endpoint{IP: strings.Join(ep.Addresses, ","), Ready: ep.Conditions.Ready != nil && *ep.Conditions.Ready}
			if ep.NodeName != nil {
				e.Node = *ep.NodeName
			}
			if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" {
				if p, err := c.CoreV1().Pods(namespace).Get(ctx, ep.TargetRef.Name, metav1.GetOptions{}); err == nil {
					e.Workload = p.Labels[fleet.LabelRelease]
					if len(p.Spec.Containers) > 0 {
						e.Image = p.Spec.Containers[0].Image
					}
				}
			}
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].IP < out[j].IP
	})
	return out, nil
}

// EndpointTable is the endpoint table as text, one row a line.
func EndpointTable(eps []Endpoint) string {
	var b strings.Builder
	for _, e := range eps {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}
