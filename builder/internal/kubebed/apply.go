package kubebed

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/jetbake/jetbake/builder/fleet"
)

// FieldManager is the server-side apply field manager of jetbake's
// manifests.
const FieldManager = "jetbake"

// ApplyOption changes how ApplyFiles applies.
type ApplyOption func(*metav1.ApplyOptions)

// DryRun applies as `kubectl apply --server-side --dry-run=server` does:
// the API server decodes, defaults, validates and admits every object, and
// stores none.
func DryRun() ApplyOption {
	return func(o *metav1.ApplyOptions) { o.DryRun = []string{metav1.DryRunAll} }
}

// ApplyFiles applies manifest files (as `jetbake fleet` writes them; the
// kustomization is left out) with server-side apply, namespaced objects in
// namespace, as `kubectl apply --server-side -n NAMESPACE` does, in
// fleet.ApplyOrder. It returns the applied objects as
// "Kind/name".
func ApplyFiles(ctx context.Context, cfg *rest.Config, namespace string, files map[string][]byte, opts ...ApplyOption) ([]string, error) {
	ao := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	for _, o := range opts {
		o(&ao)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := restMapper(cfg)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if n != "kustomization.yaml" {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool { return fleet.ApplyOrder(names[i], names[j]) < 0 })
	var applied []string
	for _, n := range names {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal(files[n], &obj.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			obj.SetNamespace(namespace)
			r = dyn.Resource(m.Resource).Namespace(namespace)
		}
		if _, err := r.Apply(ctx, obj.GetName(), &obj, ao); err != nil {
			return nil, fmt.Errorf("apply %s (%s %s): %w", n, gvk.Kind, obj.GetName(), err)
		}
		applied = append(applied, gvk.Kind+"/"+obj.GetName())
	}
	return slices.Clip(applied), nil
}

// restMapper maps kinds to resources from the API server's discovery.
func restMapper(cfg *rest.Config) (meta.RESTMapper, error) {
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	groups, err := restmapper.GetAPIGroupResources(disc)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	return restmapper.NewDiscoveryRESTMapper(groups), nil
}

// Row is one line of the placement table: a node and, for each pod bound
// to it (none, one, or more), its image and its workload (the pod's
// app.kubernetes.io/instance label, which jetbake fleet sets to APP-RELEASE).
type Row struct {
	Node      string
	Images    []string
	Workloads []string
}

// String is the row as the table prints it.
func (r Row) String() string {
	if len(r.Images) == 0 {
		return fmt.Sprintf("%-20s -> (none)", r.Node)
	}
	pods := make([]string, len(r.Images))
	for i := range r.Images {
		pods[i] = r.Workloads[i] + " " + r.Images[i]
	}
	return fmt.Sprintf("%-20s -> %s", r.Node, strings.Join(pods, ", "))
}
