package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
)

// Workload kinds.
const (
	KindDaemonSet  = "DaemonSet"
	KindDeployment = "Deployment"
)

// RuntimeClass is the RuntimeClass (and containerd handler) of NVIDIA's
// container runtime, as k3s names it.
const RuntimeClass = "nvidia"

// Options shape the objects.
type Options struct {
	// App names the workloads: APP-RELEASE ("router-jetpack6-2").
	App string
	// Kind is KindDaemonSet (every fitting node runs one pod) or
	// KindDeployment (Replicas pods on the fitting nodes).
	Kind string
	// Replicas is each Deployment's replica count.
	Replicas int32
	// Namespace, when set, is the namespace of every namespaced object and
	// the kustomization's, and a Namespace object is written.
	Namespace string
	// Serving makes each pod a server: ports, probes, args, env, cache,
	// resources; with ports, one Service selects every release's pods.
	Serving Serving
}

// Env is the environment the entrypoint reads in every pod: NVIDIA's
// runtime mounts the GPU and the driver for these, as the image config asks.
func Env() []corev1.EnvVar {
	return []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"}, {Name: "NVIDIA_DRIVER_CAPABILITIES", Value: "compute,utility"}}
}

// RequiredAnnotations are the annotations of a build report's release that
// fleet places it by: the release, its JetPack, L4T and CUDA, and its SM
// targets.
func RequiredAnnotations() []string {
	return []string{matrix.KeyRelease, matrix.KeyJetPack, matrix.KeyL4T, matrix.KeyCUDA, matrix.KeySMTargets}
}

// ReleasesFromReport reads the releases a build report (`jetbake build
// --metadata-file`) lists as built and pushed, pinned by digest.
func ReleasesFromReport(file string, r *imagebuild.Report) ([]Release, error) {
	var out []Release
	for _, rel := range r.Releases {
		if rel.Digest == "" || (rel.Outcome != imagebuild.Succeeded && rel.Outcome != imagebuild.Untagged) {
			continue
		}
		if rel.Repository == "" {
			return nil, fmt.Errorf("%s: release %s was not pushed (no repository): build with --push, then write the manifests", file, rel.Name)
		}
		var missing []string
		for _, k := range RequiredAnnotations() {
			if rel.Annotations[k] == "" {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: release %s has no annotation %s: give the file 'jetbake build --push --metadata-file' wrote, or write them (docs/fleets.md#where-the-digests-come-from)",
				file, rel.Name, strings.Join(missing, ", "))
		}
		meta, err := imagepick.ParseMeta(rel.Annotations)
		if err != nil {
			return nil, fmt.Errorf("%s: release %s: %w", file, rel.Name, err)
		}
		out = append(out, Release{Name: rel.Name, Image: rel.Repository + "@" + rel.Digest, Meta: meta})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("metadata file %s lists no built release with a digest: give the file of a 'jetbake build --push --metadata-file FILE' that built a release", file)
	}
	return out, nil
}

// Objects returns the manifests, by file name: the RuntimeClass, one
// workload per release that some node would get, the Service that selects
// every release's pods (when the image exposes a port) and the Namespace
// (when Options.Namespace is set).
func Objects(releases []Release, o Options) (map[string]any, error) {
	if o.Kind != KindDaemonSet && o.Kind != KindDeployment {
		return nil, fmt.Errorf("kind %q is neither %s nor %s", o.Kind, KindDaemonSet, KindDeployment)
	}
	if err := CheckName(o.App); err != nil {
		return nil, err
	}
	affs, err := Affinities(releases)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"runtimeclass.yaml": &nodev1.RuntimeClass{
		TypeMeta: metav1.TypeMeta{APIVersion: "node.k8s.io/v1", Kind: "RuntimeClass"}, ObjectMeta: metav1.ObjectMeta{Name: RuntimeClass}, Handler: RuntimeClass}}
	for _, r := range releases {
		aff, ok := affs[r.Name]
		if !ok {
			continue
		}
		name := WorkloadName(o.App, r.Name)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("workload name %q (--name %q and release %q) is %d characters, more than the 63 of a Kubernetes name: give --name a shorter name", name, o.App, r.Name, len(name))
		}
		out[name+".yaml"] = workload(name, r, aff, o)
	}
	if len(o.Serving.Ports) > 0 {
		out["service.yaml"] = service(o)
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return nil, fmt.Errorf("--namespace %q is not a Kubernetes namespace name: a namespace is lowercase letters, digits and '-', starting and ending with a letter or digit, 63 at most (a DNS-1123 label); write e.g. --namespace %s", o.Namespace, dnsLabelFix(o.Namespace))
		}
		out["namespace.yaml"] = &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}}
	}
	return out, nil
}

// CheckName checks the app's name (--name) as Kubernetes checks the name
// of a Service (a DNS-1035 label: a DNS-1123 label that starts with a
// letter), which also makes APP-RELEASE a workload name.
func CheckName(app string) error {
	errs := validation.IsDNS1035Label(app)
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("--name %q is not a Kubernetes name: it names the Service and the workloads, so it is lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (a DNS-1123 label that a Service also takes); write e.g. --name %s", app, dnsLabelFix(app))
}

// dnsLabelFix is s as a DNS-1035 label: lowercase, every other character a
// '-', trimmed of '-' and digits at the start and '-' at the end ("router"
// when nothing is left).
func dnsLabelFix(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	out := strings.TrimRight(strings.TrimLeft(string(b), "-0123456789"), "-")
	if len(out) > 40 {
		out = strings.Trim(out[:40], "-")
	}
	if out == "" {
		return "router"
	}
	return out
}

// WorkloadName is APP-RELEASE with the release's dots as dashes.
func WorkloadName(app, release string) string {
	return app + "-" + strings.ReplaceAll(release, ".", "-")
}

// Labels of every pod: the app, and the release for its workload.
const (
	LabelApp     = "app.kubernetes.io/name"
	LabelRelease = "app.kubernetes.io/instance"
	LabelVersion = "app.kubernetes.io/version"
)

// workload is one release's DaemonSet or Deployment.
func workload(name string, r Release, aff *corev1.NodeAffinity, o Options) any {
	sel := map[string]string{LabelApp: o.App, LabelRelease: name}
	spec := corev1.PodSpec{
		RuntimeClassName: ptr(RuntimeClass),
		Affinity:         &corev1.Affinity{NodeAffinity: aff},
		Containers:       []corev1.Container{o.Serving.container(o.App, r.Image)},
	}
	if o.Serving.Cache != nil {
		spec.Volumes = []corev1.Volume{o.Serving.Cache.volume()}
	}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelApp: o.App, LabelRelease: name, LabelVersion: r.Meta.Version}},
		Spec:       spec,
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: sel, Annotations: map[string]string{"jetbake.dev/release": r.Name, "jetbake.dev/jetpack": r.Meta.JetPack}}
	if o.Kind == KindDaemonSet {
		return &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: KindDaemonSet}, ObjectMeta: meta,
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
	}
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: KindDeployment}, ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{Replicas: ptr(o.Replicas), Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
}

// service is the one Service of the app: it selects every release's pods
// by the app's label, so that a client reaches the router without knowing
// which JetPack a node runs; each pod keeps its release's labels.
func service(o Options) *corev1.Service {
	var ports []corev1.ServicePort
	for _, p := range o.Serving.Ports {
		ports = append(ports, corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, Protocol: p.Protocol, TargetPort: intstr.FromString(p.Name)})
	}
	return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: o.App, Namespace: o.Namespace, Labels: map[string]string{LabelApp: o.App}},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{LabelApp: o.App}, Ports: ports}}
}

func ptr[T any](v T) *T { return &v }

// kustomization is kustomize's file: the resources, and the namespace.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources"`
}

// Render writes each object as YAML (sigs.k8s.io/yaml, from the objects'
// JSON) without what a user would not write (Clean), and the
// kustomization.yaml that lists them, by file name.
func Render(objs map[string]any, namespace string) (map[string][]byte, error) {
	out := map[string][]byte{}
	k := kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization", Namespace: namespace}
	for file, obj := range objs {
		clean, err := Clean(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		data, err := yaml.Marshal(clean)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out[file] = data
		k.Resources = append(k.Resources, file)
	}
	slices.SortFunc(k.Resources, ApplyOrder)
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	out["kustomization.yaml"] = data
	return out, nil
}

// ApplyOrder sorts file names: the Namespace first, as kustomize orders
// it, so that the objects in it are applied after it; then the
// RuntimeClass and the labeller's ServiceAccount, which admission checks
// each pod's runtimeClassName and serviceAccountName against, and the
// ConfigMap its pods mount; then by name.
func ApplyOrder(a, b string) int {
	rank := func(f string) int {
		switch f {
		case "namespace.yaml":
			return 0
		case "runtimeclass.yaml", "labeller-serviceaccount.yaml", "labeller-facts-configmap.yaml":
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

// keepEmpty are the fields whose empty object means something ("emptyDir:
// {}" is a volume).
func keepEmpty() []string { return []string{"emptyDir"} }

// Clean is obj as JSON fields without its status and without the empty
// and null fields Go's zero values write (updateStrategy: {}, resources:
// {}, creationTimestamp: null): what a user would write, and what
// server-side apply then owns.
func Clean(obj any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	prune(m)
	return m, nil
}

// prune deletes, depth first, every null, empty object and empty list
// under m, but keepEmpty's objects.
func prune(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			prune(x)
			if len(x) == 0 && !slices.Contains(keepEmpty(), k) {
				delete(m, k)
			}
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
			if len(x) == 0 {
				delete(m, k)
			}
		}
	}
}

// WriteDir writes the rendered files into dir (created when missing), each
// atomically.
func WriteDir(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	for name, data := range files {
		if err := inputfile.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Stream writes the rendered objects (not the kustomization) as one YAML
// stream, in file order, for kubectl apply -f -.
func Stream(files map[string][]byte) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		if n != "kustomization.yaml" {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, ApplyOrder)
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString("---\n# " + n + "\n")
		b.Write(files[n])
	}
	return b.Bytes()
}
