package kubebed_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/kubebed"
)

// TestFindSaysRunMakeDeps: a checkout without the control plane's binaries
// is told to run make deps, naming the missing one.
func TestFindSaysRunMakeDeps(t *testing.T) {
	root := t.TempDir()
	_, err := kubebed.Find(root)
	require.ErrorContains(t, err, "run make deps")
	require.ErrorContains(t, err, filepath.Join(root, "bin", "kube", "etcd"))
	dir := filepath.Join(root, "bin", "kube")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, b), nil, 0o755))
	}
	_, err = kubebed.Find(root)
	require.ErrorContains(t, err, "kube-scheduler missing")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kube-scheduler"), nil, 0o755))
	got, err := kubebed.Find(root)
	require.NoError(t, err)
	require.Equal(t, dir, got)
}
