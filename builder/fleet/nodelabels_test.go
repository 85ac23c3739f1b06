package fleet_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/jetbake/jetbake/builder/fleet"
)

func TestApplyNodeLabelsIsServerSideApply(t *testing.T) {
	var got struct {
		method, path, query, ctype string
		body                       map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.query, got.ctype = r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type")
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &got.body)
		if r.URL.Path == "/api/v1/nodes/gone" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","message":"nodes \"gone\" is forbidden: User cannot patch resource \"nodes\""}`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	l := &fleet.NodeLabeler{Server: srv.URL, Client: srv.Client()}
	require.NoError(t, l.Apply(context.Background(), "orin-1", map[string]string{"a": "b"}))
	require.Equal(t, http.MethodPatch, got.method)
	require.Equal(t, "/api/v1/nodes/orin-1", got.path)
	require.Equal(t, "fieldManager="+fleet.FieldManager+"&force=true", got.query)
	require.Equal(t, "application/apply-patch+yaml", got.ctype)
	require.Equal(t, map[string]any{"name": "orin-1", "labels": map[string]any{"a": "b"}}, got.body["metadata"])
	err := l.Apply(context.Background(), "gone", nil)
	require.ErrorContains(t, err, "403 Forbidden: nodes \"gone\" is forbidden")
}

func TestLabellerRBACIsPatchOnNodesOnly(t *testing.T) {
	objs := fleet.Labeller("registry.example/jetbake@sha256:0", "jetsons")
	role := objs["labeller-clusterrole.yaml"].(*rbacv1.ClusterRole)
	require.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"patch"}}}, role.Rules)
	require.Equal(t, "jetsons", objs["labeller-clusterrolebinding.yaml"].(*rbacv1.ClusterRoleBinding).Subjects[0].Namespace)
	files, err := fleet.Render(objs, "jetsons")
	require.NoError(t, err)
	ds := string(files["labeller-daemonset.yaml"])
	require.Contains(t, ds, "--label-node")
	require.Contains(t, ds, "mountPath: /host/etc/nv_tegra_release")
	require.Equal(t, 9, strings.Count(ds, "readOnly: true"))

	d := objs["labeller-daemonset.yaml"].(*appsv1.DaemonSet)
	pod := d.Spec.Template.Spec
	require.Equal(t, map[string]string{"kubernetes.io/arch": "arm64"}, pod.NodeSelector, "Jetsons are arm64")
	require.Empty(t, pod.Containers[0].Command, "the image's entrypoint, jetbake, runs (package labellerimage)")
	require.Equal(t, []string{"doctor", "--sysroot", "/host", "--label-node", "$(NODE_NAME)", "--every", "10m"}, pod.Containers[0].Args)
	for _, tol := range pod.Tolerations {
		require.NotEmpty(t, tol.Key, "no toleration of every taint")
	}
	types := map[string]corev1.HostPathType{}
	for _, v := range pod.Volumes {
		require.NotNil(t, v.HostPath.Type, v.HostPath.Path)
		types[v.HostPath.Path] = *v.HostPath.Type
	}
	require.Equal(t, corev1.HostPathFile, types["/etc/nv_tegra_release"], "a missing release file is no empty folder")
	require.Equal(t, corev1.HostPathDirectoryOrCreate, types["/var/lib/rancher/k3s/agent/etc/containerd"], "k3s's containerd configuration, read by doctor")
}
