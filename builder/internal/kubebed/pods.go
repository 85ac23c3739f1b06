package kubebed

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// podIPs hands out pod IPs as a node's CNI plugin does from its pod CIDR:
// 10.244.N.K for the node's index N, K counting up, one per pod UID.
type podIPs struct {
	byPod map[string]string
	next  map[int]int
}

// ip is the pod's IP on the node of index node.
func (a *podIPs) ip(node int, uid string) string {
	if ip, ok := a.byPod[uid]; ok {
		return ip
	}
	a.next[node]++
	ip := fmt.Sprintf("10.244.%d.%d", node, a.next[node]%250+1)
	a.byPod[uid] = ip
	return ip
}

// startPods does what a kubelet reports once a pod bound to its node has
// started: phase Running, the pod's IP, and Ready, as after the readiness
// probe passed. No container runs and no probe is sent: a pod is reported
// Ready as soon as it is bound, so that the EndpointSlice controller puts
// it behind its Service and the Deployment controller counts it available.
func startPods(ctx context.Context, c kubernetes.Interface, node string, index int, ips *podIPs) error {
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodRunning {
			continue
		}
		now := metav1.Now()
		ip := ips.ip(index, string(p.UID))
		p.Status.Phase, p.Status.PodIP, p.Status.PodIPs = corev1.PodRunning, ip, []corev1.PodIP{{IP: ip}}
		p.Status.StartTime = &now
		p.Status.Conditions = nil
		for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		p.Status.ContainerStatuses = nil
		for _, ctr := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: ctr.Name, Image: ctr.Image, ImageID: ctr.Image,
				Ready: true, Started: ptr(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
		}
		_, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{FieldManager: "kubelet"})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("start pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}
