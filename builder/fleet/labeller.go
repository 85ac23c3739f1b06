package fleet

import (
	"encoding/json"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// LabellerName names the labelling DaemonSet, its service account and its
// RBAC objects.
const LabellerName = "jetbake-node-labeller"

// labellerMount is a host path doctor reads, mounted read-only under /host,
// with its hostPath type.
type labellerMount struct {
	path string
	typ  corev1.HostPathType
}

// labellerMounts are the host paths doctor reads. A Jetson has the L4T
// release file, the SoC bus, the device tree and /usr/bin and /usr/local/bin
// (File and Directory: the kubelet refuses to start the pod where one is
// missing, instead of making an empty folder in its place, which an untyped
// hostPath would). The configurations of the container engines (Docker,
// containerd, k3s's containerd) and the GPU operator's toolkit folder are
// there only where that engine is: DirectoryOrCreate, so a missing one is an
// empty folder, which doctor reads as no such engine.
func labellerMounts() []labellerMount {
	return []labellerMount{
		{host.TegraReleasePath, corev1.HostPathFile},
		{"/sys/devices/soc0", corev1.HostPathDirectory},
		{host.FirmwareDTDir, corev1.HostPathDirectory},
		{"/usr/bin", corev1.HostPathDirectory},
		{"/usr/local/bin", corev1.HostPathDirectory},
		{"/usr/local/nvidia/toolkit", corev1.HostPathDirectoryOrCreate},
		{"/etc/docker", corev1.HostPathDirectoryOrCreate},
		{"/etc/containerd", corev1.HostPathDirectoryOrCreate},
		{"/var/lib/rancher/k3s/agent/etc/containerd", corev1.HostPathDirectoryOrCreate},
	}
}

// labellerTolerations are the taints a Jetson node may carry that the
// labeller tolerates: a single-node cluster's control plane
// (node-role.kubernetes.io/control-plane, kubeadm's), and a GPU node's
// nvidia.com/gpu taint. The DaemonSet controller adds the node condition
// taints (not-ready, unreachable, disk-pressure, ...) itself.
func labellerTolerations() []corev1.Toleration {
	return []corev1.Toleration{
		{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
}

// LabellerFactsDir is where the labeller's pod mounts the ConfigMap of
// the JetPack rows its releases declare, and LabellerFactsFile the file
// in it that doctor reads with --facts.
const (
	LabellerFactsDir  = "/etc/jetbake"
	LabellerFactsFile = LabellerFactsDir + "/facts.json"
)

// LabellerArgs are the labeller container's arguments, after its image's
// entrypoint, jetbake (the image of package labellerimage, or one of the
// user's whose ENTRYPOINT is jetbake). $(NODE_NAME) is the pod's node,
// which the kubelet expands from the container's environment.
func LabellerArgs() []string {
	return []string{"doctor", "--sysroot", "/host", "--label-node", "$(NODE_NAME)", "--every", "10m"}
}

// Labeller returns the objects of the labelling DaemonSet, by file name,
// for clusters without node-feature-discovery: `jetbake doctor --sysroot
// /host --label-node NODE --every 10m` (LabellerArgs) in image, whose
// entrypoint is jetbake, on every arm64 node, with the host paths doctor
// reads mounted read-only (labellerMounts). Its RBAC is the least that labels a node: "patch" on nodes
// (server-side apply of metadata.labels); Kubernetes' RBAC cannot narrow
// it to the pod's own node, so the ClusterRole grants no get, list,
// create or delete. The binding names the service account in namespace
// ("default" when empty), the kustomization's.
//
// declared are the JetPack rows the releases' images declare (DeclaredJetPacks):
// with any, a ConfigMap holds them as a facts file ("jetbake facts"'s shape) that
// the pod mounts and doctor reads with --facts, so that a node on a JetPack
// newer than the labeller's jetbake is labelled with its declared release,
// not with its line's newest built-in one.
func Labeller(image, namespace string, declared ...computecap.JetPackRelease) map[string]any {
	meta := metav1.ObjectMeta{Name: LabellerName, Labels: map[string]string{LabelApp: LabellerName}}
	nsMeta := meta
	nsMeta.Namespace = namespace
	if namespace == "" {
		namespace = "default"
	}
	var mounts []corev1.VolumeMount
	var vols []corev1.Volume
	for i, m := range labellerMounts() {
		name := "host-" + string(rune('a'+i))
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: m.path, Type: ptr(m.typ)}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: "/host" + m.path, ReadOnly: true})
	}
	args := LabellerArgs()
	objs := map[string]any{}
	if len(declared) > 0 {
		facts, err := json.MarshalIndent(computecap.Facts{JetPacks: declared}, "", "  ")
		if err == nil { // rows of plain fields always marshal
			objs["labeller-facts-configmap.yaml"] = &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: labellerFactsMeta(nsMeta), Data: map[string]string{"facts.json": string(facts) + "\n"}}
			vols = append(vols, corev1.Volume{Name: "facts", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: LabellerName + "-facts"}}}})
			mounts = append(mounts, corev1.VolumeMount{Name: "facts", MountPath: LabellerFactsDir, ReadOnly: true})
			args = append(args, "--facts", LabellerFactsFile)
		}
	}
	ds := &appsv1.DaemonSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: KindDaemonSet}, ObjectMeta: nsMeta,
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: meta.Labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: LabellerName,
					Containers: []corev1.Container{{
						Name: "labeller", Image: image,
						Args: args,
						Env: []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
						VolumeMounts:    mounts,
						SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr(true), AllowPrivilegeEscalation: ptr(false)},
					}},
					Volumes:      vols,
					NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"},
					Tolerations:  labellerTolerations(),
				},
			},
		},
	}
	maps.Copy(objs, map[string]any{
		"labeller-serviceaccount.yaml": &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: nsMeta},
		"labeller-clusterrole.yaml": &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: meta,
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"patch"}}}},
		"labeller-clusterrolebinding.yaml": &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: meta,
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: LabellerName},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: LabellerName, Namespace: namespace}}},
		"labeller-daemonset.yaml": ds,
	})
	return objs
}

// labellerFactsMeta is the metadata of the ConfigMap of declared rows.
func labellerFactsMeta(nsMeta metav1.ObjectMeta) metav1.ObjectMeta {
	nsMeta.Name = LabellerName + "-facts"
	return nsMeta
}

// DeclaredJetPacks are the JetPack rows the releases' images declare
// (io.jetbake.facts.jetpack), one per JetPack, in the releases' order.
func DeclaredJetPacks(releases []Release) []computecap.JetPackRelease {
	var rows []computecap.JetPackRelease
	for _, r := range releases {
		row := r.Meta.DeclaredJetPack()
		if row == nil || slices.ContainsFunc(rows, func(x computecap.JetPackRelease) bool { return x.JetPack == row.JetPack }) {
			continue
		}
		rows = append(rows, *row)
	}
	return rows
}
