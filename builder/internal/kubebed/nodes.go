package kubebed

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// NodeLeaseNamespace holds the nodes' heartbeat Leases.
const NodeLeaseNamespace = "kube-node-lease"

// leaseSeconds is the Lease duration a kubelet sets by default.
const leaseSeconds = 40

// RegisterNode creates a node of the architecture (amd64, arm64) as a
// kubelet registers itself: the kubernetes.io/ labels, capacity, and a
// Ready status. Other labels are applied apart, as `jetbake doctor
// --label-node` applies them.
func RegisterNode(ctx context.Context, c kubernetes.Interface, name, arch string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"kubernetes.io/arch": arch, "kubernetes.io/os": "linux", "kubernetes.io/hostname": name}}}
	if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{FieldManager: "kubelet"}); err != nil {
		return fmt.Errorf("register node %s: %w", name, err)
	}
	return Heartbeat(ctx, c, name)
}

// Heartbeat does what a kubelet does every few seconds: sets the node's
// status Ready with its capacity, and renews its Lease. A controller
// (the node lifecycle controller, the taint manager) writes the node too,
// between the Get and the update: a write that meets a newer version (409
// Conflict) gets the node again and retries, as a kubelet does and as
// client-go's retry.RetryOnConflict does (seen once in a full make test:
// "Operation cannot be fulfilled on nodes ...: the object has been
// modified").
func Heartbeat(ctx context.Context, c kubernetes.Interface, name string) error {
	var node *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		node, err = setReady(ctx, c, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s status: %w", name, err)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return renewLease(ctx, c, node) })
}

// setReady gets the node and writes its Ready status with its capacity.
func setReady(ctx context.Context, c kubernetes.Interface, name string) (*corev1.Node, error) {
	node, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	now := metav1.Now()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	node.Status.Capacity, node.Status.Allocatable = res, res
	node.Status.Phase = corev1.NodeRunning
	node.Status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", LastHeartbeatTime: now, LastTransitionTime: now},
	}
	node.Status.NodeInfo = corev1.NodeSystemInfo{Architecture: node.Labels["kubernetes.io/arch"], OperatingSystem: "linux",
		KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.0"}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}}
	return c.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{FieldManager: "kubelet"})
}

// renewLease creates or renews the node's Lease in kube-node-lease, owned
// by the node as a kubelet's is.
func renewLease(ctx context.Context, c kubernetes.Interface, node *corev1.Node) error {
	leases := c.CoordinationV1().Leases(NodeLeaseNamespace)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, node.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node.Name, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &node.Name, LeaseDurationSeconds: ptr(int32(leaseSeconds)), RenewTime: &now}}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// KeepReady renews every node's status and Lease each period, reports the
// node's new pods started and Ready (startPods), and finishes the deletion
// of its terminating pods, until ctx ends; errors go to report.
func KeepReady(ctx context.Context, c kubernetes.Interface, names []string, period time.Duration, report func(error)) {
	ips := &podIPs{byPod: map[string]string{}, next: map[int]int{}}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i, n := range names {
			if err := Heartbeat(ctx, c, n); err != nil && ctx.Err() == nil {
				report(err)
			}
			if err := startPods(ctx, c, n, i, ips); err != nil && ctx.Err() == nil {
				report(err)
			}
			if err := finishDeletions(ctx, c, n); err != nil && ctx.Err() == nil {
				report(err)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// finishDeletions does what a kubelet does once a deleted pod's containers
// have stopped (here there are none): it deletes the pod for good, with a
// grace period of 0.
func finishDeletions(ctx context.Context, c kubernetes.Interface, node string) error {
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			continue
		}
		err := c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0)),
			Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("finish deleting pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}
