package fleet

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/inputfile"
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
	// Namespace, when set, is the kustomization's namespace.
	Namespace string
}

// Env is the environment the entrypoint reads in every pod: NVIDIA's
// runtime mounts the GPU and the driver for these, as the image config asks.
func Env() []corev1.EnvVar {
	return []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"}, {Name: "NVIDIA_DRIVER_CAPABILITIES", Value: "compute,utility"}}
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

// object is one manifest: its file name and the object.
type object struct {
	file string
	obj  any
}

// Objects returns the manifests, by file name: the RuntimeClass and one
// workload per release that some node would get.
func Objects(releases []Release, o Options) (map[string]any, error) {
	if o.Kind != KindDaemonSet && o.Kind != KindDeployment {
		return nil, fmt.Errorf("kind %q is neither %s nor %s", o.Kind, KindDaemonSet, KindDeployment)
	}
	affs, err := Affinities(releases)
	if err != nil {
		return nil, err
	}
	objs := []object{{file: "runtimeclass.yaml", obj: &nodev1.RuntimeClass{
		TypeMeta: metav1.TypeMeta{APIVersion: "node.k8s.io/v1", Kind: "RuntimeClass"}, ObjectMeta: metav1.ObjectMeta{Name: RuntimeClass}, Handler: RuntimeClass}}}
	for _, r := range releases {
		aff, ok := affs[r.Name]
		if !ok {
			continue
		}
		name := WorkloadName(o.App, r.Name)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("workload name %q (app %q, release %q): %s: give --name a shorter DNS label", name, o.App, r.Name, strings.Join(errs, "; "))
		}
		objs = append(objs, object{file: name + ".yaml", obj: workload(name, r, aff, o)})
	}
	out := map[string]any{}
	for _, ob := range objs {
		out[ob.file] = ob.obj
	}
	return out, nil
}

// WorkloadName is APP-RELEASE with the release's dots as dashes.
func WorkloadName(app, release string) string {
	return app + "-" + strings.ReplaceAll(release, ".", "-")
}

// Labels of every pod: the app, and the release for its workload.
const (
	LabelApp     = "app.kubernetes.io/name"
	LabelRelease = "app.kubernetes.io/instance"
)

// workload is one release's DaemonSet or Deployment.
func workload(name string, r Release, aff *corev1.NodeAffinity, o Options) any {
	sel := map[string]string{LabelApp: o.App, LabelRelease: name}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelApp: o.App, LabelRelease: name, "app.kubernetes.io/version": r.Meta.Version}},
		Spec: corev1.PodSpec{
			RuntimeClassName: ptr(RuntimeClass),
			Affinity:         &corev1.Affinity{NodeAffinity: aff},
			Containers:       []corev1.Container{{Name: o.App, Image: r.Image, Env: Env()}},
		},
	}
	meta := metav1.ObjectMeta{Name: name, Labels: sel, Annotations: map[string]string{"jetbake.dev/release": r.Name, "jetbake.dev/jetpack": r.Meta.JetPack}}
	if o.Kind == KindDaemonSet {
		return &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: KindDaemonSet}, ObjectMeta: meta,
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
	}
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: KindDeployment}, ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{Replicas: ptr(o.Replicas), Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
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
// JSON) and the kustomization.yaml that lists them, by file name.
func Render(objs map[string]any, namespace string) (map[string][]byte, error) {
	out := map[string][]byte{}
	k := kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization", Namespace: namespace}
	for file, obj := range objs {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out[file] = data
		k.Resources = append(k.Resources, file)
	}
	slices.Sort(k.Resources)
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	out["kustomization.yaml"] = data
	return out, nil
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
	slices.Sort(names)
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString("---\n# " + n + "\n")
		b.Write(files[n])
	}
	return b.Bytes()
}
